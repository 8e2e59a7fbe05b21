# Source: https://github.com/fangwei123456/spikingjelly/issues/280
"""spikingjelly question, fixed as the maintainer's answer implies (only leaf tensors get `.grad`):
the input is created directly on the device as a leaf, `torch.rand([4, 8], device=device,
requires_grad=True)`, so after `net(x).sum().backward()` `x.grad` holds the surrogate gradient.
spikingjelly's neuron and surrogate modules are small stand-ins written here (CPU device).
"""
import torch
import torch.nn as nn


def cuda(t):
    """Stand-in for Tensor.cuda() on a CPU-only machine: a differentiable device copy."""
    return t.clone()


# ---- spikingjelly.activation_based.surrogate / neuron stand-ins ----
class surrogate:
    @staticmethod
    def heaviside(x):
        return (x >= 0).to(x)


class IFNode(nn.Module):
    def __init__(self, v_threshold=1.0, v_reset=0.0, surrogate_function=None):
        super().__init__()
        self.v_threshold = v_threshold
        self.v_reset = v_reset
        self.surrogate_function = surrogate_function
        self.v = v_reset

    def neuronal_charge(self, x):
        self.v = self.v + x

    def neuronal_fire(self):
        return self.surrogate_function(self.v - self.v_threshold)

    def neuronal_reset(self, spike):
        self.v = (1. - spike) * self.v + spike * self.v_reset

    def forward(self, x):
        self.neuronal_charge(x)
        spike = self.neuronal_fire()
        self.neuronal_reset(spike)
        return spike

    def cuda(self):
        return self


# ---- the user's surrogate ----
class ste(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, alpha):
        if x.requires_grad:
            ctx.save_for_backward(x)
            ctx.alpha = alpha
        return surrogate.heaviside(x)

    @staticmethod
    def backward(ctx, grad_output):
        print(grad_output)
        x = ctx.saved_tensors[0]
        print(x)
        mask = (x.abs() <= ctx.alpha).to(x)
        return grad_output * mask, x.abs().mean()


class STE(nn.Module):
    def __init__(self, alpha: float = 1.):
        super(STE, self).__init__()
        self.alpha = nn.Parameter(torch.as_tensor(alpha))

    def forward(self, x):
        return ste.apply(x, self.alpha)


net = IFNode(surrogate_function=STE()).cuda()

device = "cpu"  # "cuda" on the reporter's machine
x = torch.rand([4, 8], device=device, requires_grad=True)

net(x).sum().backward()
print(x.grad)
print(net.surrogate_function.alpha.grad)
