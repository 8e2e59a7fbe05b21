# Source: https://github.com/cbarkan1/machine-learning-sandbox
"""PINN for the ODE u' = -u, u(0) = 1, taking du/dx with ``torch.autograd.grad`` but no ``grad_outputs``.

The notes explain what ``grad_outputs`` of ``torch.autograd.grad`` means: for a
batched output Y and vector V of Y's shape, the result is
sum_{b',n} V[b',n] * dY[b',n]/dX[b,q]; for a typical PINN, where each row of the
batch is an independent collocation point and the model is scalar-valued,
``V = torch.ones_like(Y)`` gives exactly the per-point derivative the ODE/PDE
loss needs.  This PINN leaves ``grad_outputs`` out.  ``u`` is the (N, 1)
batch of network outputs, not a scalar, so autograd cannot pick the seed
itself and ``torch.autograd.grad(u, x, create_graph=True)`` raises "grad can be
implicitly created only for scalar outputs".

Fix (the notes' recipe): pass ``grad_outputs=torch.ones_like(u)``.
"""
import torch
import torch.nn as nn

torch.manual_seed(0)

model = nn.Sequential(nn.Linear(1, 20), nn.Tanh(), nn.Linear(20, 20), nn.Tanh(), nn.Linear(20, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)

x = torch.linspace(0.0, 2.0, 50).reshape(-1, 1).requires_grad_(True)  # collocation points
x0 = torch.zeros(1, 1)

for step in range(200):
    optimizer.zero_grad()
    u = model(x)
    du_dx = torch.autograd.grad(u, x, create_graph=True)[0]  # expect: GG105
    residual = du_dx + u                      # u' = -u
    ic = model(x0) - 1.0                      # u(0) = 1
    loss = residual.pow(2).mean() + ic.pow(2).mean()
    loss.backward()
    optimizer.step()

with torch.no_grad():
    x_test = torch.tensor([[1.0]])
    print("u(1) =", model(x_test).item(), "exact", torch.exp(torch.tensor(-1.0)).item())
