"""A graph built in 30 steps, then walked twice: the picture must stay readable."""
import torch

w = torch.randn(8, requires_grad=True)
h = w * 1.5
h = torch.tanh(h)
h = h * w
h = torch.sigmoid(h)
h = h.exp()
h = h / (1 + h.abs())
h = torch.tanh(h)
h = h * w
h = torch.sigmoid(h)
h = h.exp()
h = h / (1 + h.abs())
h = torch.tanh(h)
h = h * w
h = torch.sigmoid(h)
h = h.exp()
h = h / (1 + h.abs())
h = torch.tanh(h)
h = h * w
h = torch.sigmoid(h)
h = h.exp()
h = h / (1 + h.abs())
h = torch.tanh(h)
h = h * w
h = torch.sigmoid(h)
h = h.exp()
h = h / (1 + h.abs())
h = torch.tanh(h)
h = h * w
h = torch.sigmoid(h)
h = h.exp()
loss = h.sum()
loss.backward()
loss.backward()  # expect: GG101
