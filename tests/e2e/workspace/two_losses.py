import torch

# Two losses share one graph, each backwarded on its own (seed 001).
w = torch.randn(3, requires_grad=True)
x = torch.randn(3)
h = torch.tanh(w * x)
loss1 = h.sum()
loss2 = (h ** 2).sum()
loss1.backward()
loss2.backward()
print("grad", w.grad)
