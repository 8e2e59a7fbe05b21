# Source: https://github.com/rtqichen/torchdiffeq/issues/154
"""Fixed twin of q_torchdiffeq_adjoint_gradient_field_func_bug.py. A neural ODE whose vector field is the
gradient of an MLP, `torch.autograd.grad(y, x, ..., create_graph=True)` inside `ODEFunc.forward`,
trained with `odeint_adjoint`: the adjoint's forward solves under `torch.no_grad()`, so `y` had no
graph and the `autograd.grad` raised. Fix (the maintainer's answer in the thread): differentiate
inside `with torch.enable_grad():` w.r.t. `x = x.clone().requires_grad_(True)`. torchdiffeq is a
small stand-in written in the file (RK4 `odeint`; an `odeint_adjoint` whose backward recomputes
the solve with grad on).
"""
import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim

# ----------------------------- stand-in: torchdiffeq -----------------------------


def odeint(func, y0, t):
    ys, y = [y0], y0
    for t0, t1 in zip(t[:-1], t[1:]):
        h = t1 - t0
        k1 = func(t0, y)
        k2 = func(t0 + h / 2, y + h / 2 * k1)
        k3 = func(t0 + h / 2, y + h / 2 * k2)
        k4 = func(t1, y + h * k3)
        y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        ys.append(y)
    return torch.stack(ys)


class OdeintAdjointMethod(torch.autograd.Function):

    @staticmethod
    def forward(ctx, func, t, y0, *adjoint_params):
        ctx.func, ctx.adjoint_params = func, adjoint_params
        with torch.no_grad():
            ans = odeint(func, y0, t)
        ctx.save_for_backward(t, y0)
        return ans

    @staticmethod
    def backward(ctx, grad_y):
        t, y0 = ctx.saved_tensors
        with torch.enable_grad():
            y0 = y0.detach().requires_grad_(True)
            ans = odeint(ctx.func, y0, t)
            grads = torch.autograd.grad(ans, (y0,) + tuple(ctx.adjoint_params), grad_y, allow_unused=True)
        return (None, None) + tuple(grads)


def odeint_adjoint(func, y0, t):
    adjoint_params = tuple(p for p in func.parameters() if p.requires_grad)
    return OdeintAdjointMethod.apply(func, t, y0, *adjoint_params)

# ----------------------------- the reporter's ode_demo variant -----------------------------


data_size, batch_time, batch_size, niters = 40, 5, 8, 3
device = torch.device('cpu')
true_y0 = torch.tensor([[2., 0.]]).to(device)
t = torch.linspace(0., 2., data_size).to(device)
true_A = torch.tensor([[-0.1, 2.0], [-2.0, -0.1]]).to(device)


class Lambda(nn.Module):

    def forward(self, t, y):
        return torch.mm(y ** 3, true_A)


with torch.no_grad():
    true_y = odeint(Lambda(), true_y0, t)


def get_batch():
    s = torch.from_numpy(np.random.choice(np.arange(data_size - batch_time, dtype=np.int64), batch_size, replace=False))
    batch_y0 = true_y[s]  # (M, D)
    batch_t = t[:batch_time]  # (T)
    batch_y = torch.stack([true_y[s + i] for i in range(batch_time)], dim=0)  # (T, M, D)
    return batch_y0.to(device), batch_t.to(device), batch_y.to(device)


class ODEFunc(nn.Module):

    def __init__(self):
        super(ODEFunc, self).__init__()
        self.net = nn.Sequential(nn.Linear(2, 50), nn.Tanh(), nn.Linear(50, 2))

    def my_func(self, x):
        y = self.net(x)
        return y

    def forward(self, t, x):
        with torch.enable_grad():
            x = x.clone().requires_grad_(True)
            y = self.my_func(x)
            dy = torch.autograd.grad(y, x, grad_outputs=torch.ones_like(y), create_graph=True)[0]
        return dy


np.random.seed(0)
func = ODEFunc().to(device)
optimizer = optim.RMSprop(func.parameters(), lr=1e-3)
for itr in range(1, niters + 1):
    optimizer.zero_grad()
    batch_y0, batch_t, batch_y = get_batch()
    pred_y = odeint_adjoint(func, batch_y0, batch_t).to(device)
    loss = torch.mean(torch.abs(pred_y - batch_y))
    loss.backward()
    optimizer.step()
    print('Iter {:04d} | Total Loss {:.6f}'.format(itr, loss.item()))
