"""Hessian-vector products for a curvature estimate, then an ordinary training step."""
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(3, 6), nn.Tanh(), nn.Linear(6, 1))
params = list(model.parameters())
opt = torch.optim.SGD(params, lr=0.05)
for step in range(2):
    x, y = torch.randn(8, 3), torch.randn(8, 1)
    loss = nn.functional.mse_loss(model(x), y)
    grads = torch.autograd.grad(loss, params, create_graph=True)
    v = [torch.randn_like(p) for p in params]
    hv = torch.autograd.grad(grads, params, grad_outputs=v, retain_graph=True)
    curvature = sum((a * b).sum() for a, b in zip(hv, v)).item()
    opt.zero_grad()
    loss.backward()
    opt.step()
