# Source: https://github.com/lululxvi/deepxde/pull/2077
"""The modified diffusion_1d_inverse example (C in the initial condition) with the fix proposed
for the caching (PR 2094 on issue 2074): on the PyTorch backend npfunc_range_autocache returns the
non-caching wrapper, so the IC values are recomputed from the current C at every iteration and each
training closure backwards a fresh graph; C now also receives its gradient. DeepXDE is a small
stand-in written here on torch.
"""
from functools import wraps

import numpy as np
import torch


# ---------------------------------------------------------------- deepxde stand-ins
def Variable(initial_value):
    return torch.tensor(float(initial_value), requires_grad=True)


class grad:
    @staticmethod
    def jacobian(ys, xs, i=0, j=None):
        g = torch.autograd.grad(ys[:, i:i + 1], xs, grad_outputs=torch.ones_like(ys[:, i:i + 1]),
                                create_graph=True)[0]
        return g if j is None else g[:, j:j + 1]

    @staticmethod
    def hessian(ys, xs, component=0, i=0, j=0):
        dy_xi = grad.jacobian(ys, xs, i=component, j=i)
        return torch.autograd.grad(dy_xi, xs, grad_outputs=torch.ones_like(dy_xi), create_graph=True)[0][:, j:j + 1]


def npfunc_range_autocache(func):
    """Memoise func(X[beg:end]) for the fixed training points, as deepxde.icbc does."""
    cache = {}

    @wraps(func)
    def wrapper_nocache(X, beg, end, _):
        return func(X[beg:end])

    @wraps(func)
    def wrapper_cache(X, beg, end, _):
        key = (id(X), beg, end)
        if key not in cache:
            cache[key] = func(X[beg:end])
        return cache[key]

    # functions may close over trainable variables (inverse problems): never memoise them
    return wrapper_nocache


class DirichletBC:
    def __init__(self, geom, func, on_boundary, component=0):
        self.geom, self.on_boundary, self.component = geom, on_boundary, component
        self.func = npfunc_range_autocache(func)

    def collocation_points(self, X):
        return X[[self.on_boundary(x) for x in X]]

    def error(self, X, inputs, outputs, beg, end, aux_var=None):
        values = self.func(X, beg, end, aux_var)
        return outputs[beg:end, self.component:self.component + 1] - values


class IC(DirichletBC):
    pass


class GeometryXTime:
    """Interval [-1, 1] x time [0, 1]: random domain, boundary and initial points."""
    def __init__(self, num_domain, num_boundary, num_initial, seed=0):
        rng = np.random.RandomState(seed)
        dom = np.stack([rng.uniform(-1, 1, num_domain), rng.uniform(0, 1, num_domain)], 1)
        bnd = np.stack([rng.choice([-1.0, 1.0], num_boundary), rng.uniform(0, 1, num_boundary)], 1)
        ini = np.stack([rng.uniform(-1, 1, num_initial), np.zeros(num_initial)], 1)
        self.points = {"domain": dom, "boundary": bnd, "initial": ini}


class TimePDE:
    def __init__(self, geomtime, pde, ic_bcs):
        self.pde, self.bcs = pde, ic_bcs
        bc_points = [geomtime.points["boundary"], geomtime.points["initial"]]
        self.num_bcs = [len(p) for p in bc_points]
        self.train_x = torch.as_tensor(np.concatenate(bc_points + [geomtime.points["domain"]]),
                                       dtype=torch.float32)

    def losses(self, outputs, inputs):
        f = self.pde(inputs, outputs)
        bcs_start = np.cumsum([0] + self.num_bcs)
        losses = [torch.mean(f[bcs_start[-1]:] ** 2)]
        for i, bc in enumerate(self.bcs):
            beg, end = bcs_start[i], bcs_start[i + 1]
            error = bc.error(self.train_x, inputs, outputs, beg, end)
            losses.append(torch.mean(error ** 2))
        return losses


class FNN(torch.nn.Module):
    def __init__(self, layer_sizes, activation="tanh"):
        super().__init__()
        self.linears = torch.nn.ModuleList(torch.nn.Linear(a, b) for a, b in zip(layer_sizes[:-1], layer_sizes[1:]))

    def forward(self, x):
        for linear in self.linears[:-1]:
            x = torch.tanh(linear(x))
        return self.linears[-1](x)


class Model:
    def __init__(self, data, net):
        self.data, self.net = data, net

    def compile(self, optimizer, lr, external_trainable_variables=None):
        params = list(self.net.parameters()) + list(external_trainable_variables or [])
        self.opt = torch.optim.Adam(params, lr=lr)

    def outputs_losses_train(self):
        inputs = self.data.train_x.clone().requires_grad_(True)
        outputs = self.net(inputs)
        return outputs, torch.stack(self.data.losses(outputs, inputs))

    def train(self, iterations):
        for step in range(iterations):
            def closure():
                losses = self.outputs_losses_train()[1]
                total_loss = torch.sum(losses)
                self.opt.zero_grad()
                total_loss.backward()
                return total_loss
            self.opt.step(closure)


# ---------------------------------------------------------------- the user's script
C = Variable(2.0)


def pde(x, y):
    dy_t = grad.jacobian(y, x, i=0, j=1)
    dy_xx = grad.hessian(y, x, i=0, j=0)
    return (dy_t - dy_xx + torch.exp(-x[:, 1:])
            * (torch.sin(np.pi * x[:, 0:1]) - np.pi ** 2 * torch.sin(np.pi * x[:, 0:1])))


def func(x):
    return torch.sin(np.pi * x[:, 0:1]) * torch.exp(-x[:, 1:])


def func_ic(x):
    return torch.sin(C * x[:, 0:1]) * torch.exp(-x[:, 1:2])


geomtime = GeometryXTime(num_domain=40, num_boundary=10, num_initial=10)
bc = DirichletBC(geomtime, func, lambda x: np.isclose(abs(x[0]), 1.0))
ic = IC(geomtime, func_ic, lambda x: np.isclose(x[1], 0.0))
data = TimePDE(geomtime, pde, [bc, ic])
net = FNN([2, 16, 16, 1], "tanh")
model = Model(data, net)
model.compile("adam", lr=0.001, external_trainable_variables=[C])
model.train(iterations=3)
