# Source: https://coderethan.fun/AI/01_deep_learning_theory/21-pytorch-autograd.html
"""The Chinese notes "pytorch autograd 原理概述", section 2.4 控制梯度计算: set_no_grad() computes
z = x @ w + b, backwards it with a random upstream gradient, then recomputes z inside
torch.no_grad() and keeps the second backward commented out (# z.backward(torch.ones_like(z))),
printing requires_grad False. Run, that backward raises "element 0 of tensors does not require
grad and does not have a grad_fn". The notes' function, with the commented backward run by a
two-round fitting helper that reuses it."""
import torch

torch.manual_seed(0)


def forward(x, w, b):
    return torch.matmul(x, w) + b


def set_no_grad(rounds=2):
    x = torch.ones(5, requires_grad=True)
    w = torch.randn(5, 3, requires_grad=True)
    b = torch.randn(3, requires_grad=True)
    z = forward(x, w, b)
    z.backward(torch.randn_like(z))
    print("x grad: ", x.grad)
    for r in range(rounds):
        with torch.no_grad():
            z = forward(x, w, b)
        print("requires_grad: ", z.requires_grad)
        z.backward(torch.ones_like(z))  # expect: GG104
        print(r, w.grad.sum().item())


set_no_grad()
