"""Fitting until the loss is small enough, with a while loop; the scale factor of the inputs
comes from a learnable log-scale that was exponentiated once before the loop."""
import torch

log_scale = torch.zeros(1, requires_grad=True)
w = torch.zeros(3, requires_grad=True)
x, y = torch.randn(20, 3), torch.randn(20)
scale = log_scale.exp()
opt = torch.optim.SGD([w, log_scale], lr=0.1)
loss = torch.tensor(float("inf"))
it = 0
while loss.item() > 1e-3 and it < 5:
    loss = ((x * scale) @ w - y).pow(2).mean()
    opt.zero_grad()
    loss.backward()  # expect: GG101
    opt.step()
    it += 1
