# Source: https://discuss.pytorch.org/t/understanding-autograd-relu-inplace-true/89031
"""Gradient check of an in-place ReLU and a ResNet-like residual helper.

The reporter wants to check the gradient of ``F.relu_`` (and of a ResNet-style
``residual_activation_inplace`` helper that does ``x += r`` and then an in-place
activation).  The first attempt creates the test input as a leaf with
``requires_grad_()`` and hands that leaf straight to the in-place op.  torch
refuses: "a leaf Variable that requires grad is being used in an in-place
operation" (the reporter mentions having to ``clone()`` to get past it).

Fix (the thread's answer, albanD): keep the leaf untouched and run the in-place
op on a clone, ``x2 = x.clone(); F.relu_(x2)``, then differentiate w.r.t. the
leaf ``x``; the same for the residual helper (pass ``x.clone()``).
"""
import torch
import torch.nn.functional as F

torch.manual_seed(0)


def residual_activation_inplace(x, residual, activation, inplace):
    for r in residual:
        x += r
    return activation(x, inplace=inplace)


def check_relu(inplace):
    x = torch.tensor([-1.0]).requires_grad_()
    if inplace:
        y = F.relu_(x)  # expect: GG108
    else:
        y = F.relu(x)
    return torch.autograd.grad(y, (x,))[0]


def check_residual():
    x = torch.rand(3, 4).requires_grad_()
    residual = [torch.rand(3, 4), torch.rand(3, 4)]
    y = residual_activation_inplace(x, residual, F.relu, inplace=True)
    y.sum().backward()
    return x.grad


if __name__ == "__main__":
    # not in place
    print(check_relu(inplace=False))
    # inplace
    print(check_relu(inplace=True))
    print(check_residual())
