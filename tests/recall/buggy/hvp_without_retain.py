"""Curvature logging with a Hessian-vector product taken without retain_graph: the double
backward runs through the forward graph's nodes and frees them before the training backward."""
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(3, 6), nn.Tanh(), nn.Linear(6, 1))
params = list(model.parameters())
opt = torch.optim.SGD(params, lr=0.05)
x, y = torch.randn(8, 3), torch.randn(8, 1)
loss = nn.functional.mse_loss(model(x), y)
grads = torch.autograd.grad(loss, params, create_graph=True)
v = [torch.randn_like(p) for p in params]
hv = torch.autograd.grad(grads, params, grad_outputs=v)
curvature = sum((a * b).sum() for a, b in zip(hv, v)).item()
opt.zero_grad()
loss.backward()  # expect: GG101
opt.step()
