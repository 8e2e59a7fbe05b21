# Source: https://coderethan.fun/AI/01_deep_learning_theory/21-pytorch-autograd.html
"""The notes leave the backward under no_grad commented out because z has no graph there; the
fix is to recompute z with gradient tracking on when it is to be backwarded (no_grad only for the
printed value)."""
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
            z_eval = forward(x, w, b)
        print("requires_grad: ", z_eval.requires_grad)
        z = forward(x, w, b)
        z.backward(torch.ones_like(z))
        print(r, w.grad.sum().item())


set_no_grad()
