# Source: https://github.com/cbarkan1/machine-learning-sandbox
"""PINN for the ODE u' = -u, u(0) = 1 (fixed: ``grad_outputs=torch.ones_like(u)``).

``u`` is an (N, 1) batch of outputs, so ``torch.autograd.grad(u, x)`` without
``grad_outputs`` raised "grad can be implicitly created only for scalar
outputs".  Fix, following the notes: with independent collocation points and a
scalar-valued model, ``grad_outputs=torch.ones_like(u)`` yields the per-point
derivative du/dx that the residual needs.
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
    du_dx = torch.autograd.grad(u, x, grad_outputs=torch.ones_like(u), create_graph=True)[0]
    residual = du_dx + u                      # u' = -u
    ic = model(x0) - 1.0                      # u(0) = 1
    loss = residual.pow(2).mean() + ic.pow(2).mean()
    loss.backward()
    optimizer.step()

with torch.no_grad():
    x_test = torch.tensor([[1.0]])
    print("u(1) =", model(x_test).item(), "exact", torch.exp(torch.tensor(-1.0)).item())
