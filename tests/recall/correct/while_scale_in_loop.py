"""Fitting until converged with a while loop; the learnable scale is exponentiated every pass."""
import torch

log_scale = torch.zeros(1, requires_grad=True)
w = torch.zeros(3, requires_grad=True)
x, y = torch.randn(20, 3), torch.randn(20)
opt = torch.optim.SGD([w, log_scale], lr=0.1)
loss, it = torch.tensor(float("inf")), 0
while loss.item() > 1e-3 and it < 5:
    loss = ((x * log_scale.exp()) @ w - y).pow(2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    it += 1
