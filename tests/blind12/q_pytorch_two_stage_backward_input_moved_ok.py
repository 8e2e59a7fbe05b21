# Source: https://github.com/pytorch/pytorch/issues/8287
"""Fixed twin of q_pytorch_two_stage_backward_input_moved_bug.py. The user backpropagates a two-stage network in two steps: the second stage runs on
`h1.detach().requires_grad_()`, its loss is backwarded, then `h1.backward(gradient=h2.grad)` carries
the gradient into the first stage. On the GPU `x.grad` stays None (torch warns "The .grad attribute
of a Tensor that is not a leaf Tensor is being accessed"): `x = torch.randn(..., requires_grad=True)
.cuda(0)` is a copy of the leaf, not the leaf. Here the maintainer's fix from the thread: x is
created on the device as the leaf (`torch.randn(..., requires_grad=True, device=...)`). This runs on CPU: the move to the device is a
conversion to float64 here (like `.cuda(0)`, it returns a new tensor).
"""
import torch
import torch.nn as nn

device = torch.float64  # stands for cuda:0

x = torch.randn(2, 2, requires_grad=True, dtype=device)
t = torch.randn(2, 2).to(device)
loss_func = nn.MSELoss().to(device)
l1 = nn.Sequential(*[nn.Linear(2, 2) for _ in range(3)]).to(device)
l2 = nn.Sequential(*[nn.Linear(2, 2) for _ in range(3)]).to(device)
h1 = l1(x)
h2 = h1.detach().requires_grad_()
h3 = l2(h2)
l = loss_func(h3, t)
l.backward()
print('h2:', h2.grad)
h1.backward(gradient=h2.grad)
print('x:', x.grad)
