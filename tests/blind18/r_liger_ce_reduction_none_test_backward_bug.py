# Source: https://github.com/linkedin/Liger-Kernel/pull/435
"""Liger-Kernel PR #435 ("Fix LigerCrossEntropyLoss Reduction Behavior for 'None' Mode"): once the kernel returns
the per-token loss vector for `reduction="none"`, the test helper `_test_correctness_once` of
test_cross_entropy.py, parametrized over "mean", "sum" and "none", still calls `output.backward()` on torch's
`CrossEntropyLoss(reduction=reduction)` output: for "none" that output is a vector and torch raises "grad can be
implicitly created only for scalar outputs". The PR's fix: `output.backward(gradient=torch.ones_like(output))`
(and the same for Liger's output).
A pure-torch `autograd.Function` (loss and its gradient computed in forward, as the Triton kernel does) stands in
for `LigerCrossEntropyFunction`; the pytest parametrization is a loop.
"""
import torch
import torch.nn.functional as F
from torch.nn import CrossEntropyLoss

device = "cpu"


class LigerCrossEntropyFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, _input, target, ignore_index, reduction):
        logp = torch.log_softmax(_input.float(), dim=-1)
        mask = target != ignore_index
        safe_target = target.clamp(min=0)
        loss_1d = -logp.gather(1, safe_target.unsqueeze(1)).squeeze(1) * mask
        grad = (logp.exp() - F.one_hot(safe_target, _input.shape[-1])) * mask.unsqueeze(1)
        n_non_ignore = mask.sum()
        if reduction == "mean":
            loss = loss_1d.sum() / n_non_ignore
            grad = grad / n_non_ignore
        elif reduction == "sum":
            loss = loss_1d.sum()
        else:
            loss = loss_1d  # the PR: "none" returns the unreduced loss array
        ctx.save_for_backward(grad.to(_input.dtype))
        ctx.reduction = reduction
        return loss

    @staticmethod
    def backward(ctx, grad_output):
        (grad,) = ctx.saved_tensors
        if ctx.reduction == "none":
            grad = grad * grad_output.unsqueeze(1)
        else:
            grad = grad * grad_output
        return grad, None, None, None


class LigerCrossEntropyLoss(torch.nn.Module):
    def __init__(self, ignore_index=-100, reduction="mean"):
        super().__init__()
        self.ignore_index = ignore_index
        self.reduction = reduction

    def forward(self, _input, target):
        return LigerCrossEntropyFunction.apply(_input, target, self.ignore_index, self.reduction)


def _test_correctness_once(target_ce, B, T, V, reduction, scalar, dtype, atol, rtol):
    torch.manual_seed(0)
    torch_ce = CrossEntropyLoss(reduction=reduction)

    _tensor = torch.randn(B * T, V, device=device, dtype=dtype) * scalar
    _input = _tensor.detach().clone().requires_grad_(True)
    _input2 = _tensor.detach().clone().requires_grad_(True)

    target = torch.randint(0, V, (B * T,), device=device, dtype=torch.long)

    output = torch_ce(_input, target)
    output2 = target_ce(_input2, target)
    assert torch.allclose(output, output2, atol=atol, rtol=rtol)

    output.backward()  # expect: GG105
    output2.backward()
    assert torch.allclose(_input.grad, _input2.grad, atol=atol, rtol=rtol)


def test_correctness(B, T, V, scalar, dtype, reduction, atol, rtol):
    liger_ce = LigerCrossEntropyLoss(reduction=reduction)
    _test_correctness_once(liger_ce, B, T, V, reduction, scalar, dtype, atol, rtol)


for reduction in ["sum", "mean", "none"]:
    for scalar, dtype, atol, rtol in [(1.0, torch.float32, 1e-6, 1e-5)]:
        test_correctness(2, 4, 16, scalar, dtype, reduction, atol, rtol)
        print("passed", reduction)
