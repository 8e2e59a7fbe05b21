import torch

w = torch.randn(3, requires_grad=True)
for step in range(2):
    loss = torch.exp(w).sum()
    loss.backward()
print(w.grad)
