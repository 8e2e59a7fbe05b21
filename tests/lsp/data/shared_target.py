"""A target built from a tensor that requires grad, outside the training loop (seed 000)."""
import torch

true_w = torch.randn(2, 1, requires_grad=True)
X = torch.randn(8, 2)
Y = torch.mm(X, true_w) + 1

w = torch.zeros(2, 1, requires_grad=True)
opt = torch.optim.SGD([w], lr=0.1)
for epoch in range(3):
    pred = X @ w
    loss = ((pred - Y) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
print(loss.item())
