# Source: https://discuss.pytorch.org/t/understanding-autograd-relu-inplace-true/89031
"""Gradient check of an in-place ReLU and a ResNet-like residual helper (fixed).

The reporter checks the gradient of ``F.relu_`` and of a ResNet-style helper
that does ``x += r`` followed by an in-place activation.  Running the in-place
op directly on the ``requires_grad`` leaf raises "a leaf Variable that requires
grad is being used in an in-place operation".

Fix, as given in the thread (albanD): keep the leaf untouched and apply the
in-place ops to a clone (``x2 = x.clone(); F.relu_(x2)``), differentiating with
respect to the leaf ``x``; the residual helper likewise gets ``x.clone()``.
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
    x2 = x.clone()
    if inplace:
        y = F.relu_(x2)
    else:
        y = F.relu(x2)
    return torch.autograd.grad(y, (x,))[0]


def check_residual():
    x = torch.rand(3, 4).requires_grad_()
    residual = [torch.rand(3, 4), torch.rand(3, 4)]
    y = residual_activation_inplace(x.clone(), residual, F.relu, inplace=True)
    y.sum().backward()
    return x.grad


if __name__ == "__main__":
    # not in place
    print(check_relu(inplace=False))
    # inplace
    print(check_relu(inplace=True))
    print(check_residual())
