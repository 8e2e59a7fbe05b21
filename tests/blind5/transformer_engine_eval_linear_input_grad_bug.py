# Source: https://github.com/NVIDIA/TransformerEngine/pull/72
"""Taking input gradients through Transformer Engine's Linear in eval mode (TransformerEngine
PR 72): te.Linear.forward picks `_Linear.apply` only when `self.training`, and otherwise calls the
autograd Function's static `_Linear.forward(None, ...)` directly. That forward runs the
extension's GEMM kernel, which has no autograd formula, so in eval mode the output carries no
graph although the input requires grad, and the PR's example `torch.autograd.grad(loss, inp)`
fails ("element 0 of tensors does not require grad and does not have a grad_fn"; the PR keys the
choice on torch.is_grad_enabled() instead of self.training). _Linear (non-FP8 path, without tensor
and sequence parallelism) and Linear.forward are TE's at the PR's parent; the extension's gemm is
stood in by a matmul on detached operands (a kernel autograd cannot see), and a two-layer
regressor probed for input saliency in eval mode by the PR's loss stands in for the model."""
import torch
import torch.nn as nn


def gemm(A, B, out_dtype, use_bias=False, bias=None, grad=False):
    """tex.gemm: out = B @ A^T (+ bias), computed by a CUDA kernel outside autograd."""
    out = B.detach().to(out_dtype) @ A.detach().to(out_dtype).T
    if use_bias:
        out = out + bias.detach()
    return out


class _Linear(torch.autograd.Function):
    """Linear semi-top level module
    Calls custom cuda extensions.
    """

    @staticmethod
    def forward(ctx, weight, inp, bias, use_bias, activation_dtype, is_training):
        # Make sure input dimensions are compatible
        in_features = weight.shape[-1]
        assert inp.shape[-1] == in_features, "GEMM not possible"
        inputmat = inp.view((-1, in_features))

        out = gemm(weight, inputmat, activation_dtype, use_bias=use_bias, bias=bias)

        if is_training:
            ctx.save_for_backward(inputmat, weight)
            ctx.use_bias = use_bias
            ctx.inp_shape = inp.shape

        # [*, in_features] -> [*, out_features]
        return out.view(-1, *inp.shape[1:-1], out.shape[-1])

    @staticmethod
    def backward(ctx, grad_output):
        inputmat, weight = ctx.saved_tensors
        grad_output = grad_output.contiguous().view((-1, grad_output.shape[-1]))
        dgrad = grad_output @ weight
        wgrad = grad_output.T @ inputmat
        grad_bias = grad_output.sum(dim=0) if ctx.use_bias else None
        return wgrad, dgrad.view(ctx.inp_shape), grad_bias, None, None, None


class Linear(nn.Module):
    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(out_features, in_features))
        self.bias = nn.Parameter(torch.zeros(out_features))
        self.use_bias = bias
        self.activation_dtype = torch.float32
        nn.init.normal_(self.weight, std=0.2)

    def forward(self, inp):
        if self.training:
            linear_fn = _Linear.apply
            args = []
        else:
            linear_fn = _Linear.forward
            args = [None]
        args += (self.weight, inp, self.bias, self.use_bias, self.activation_dtype, self.training)
        return linear_fn(*args)


class Regressor(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = Linear(6, 16)
        self.fc2 = Linear(16, 1)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


model = Regressor()
optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
for step in range(3):
    x, y = torch.randn(8, 6), torch.randn(8, 1)
    loss = ((model(x) - y) ** 2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

# input saliency of the trained regressor
model.eval()
inp = torch.randn(4, 6, requires_grad=True)
out = model(inp)
loss = out.mean()
saliency, = torch.autograd.grad(loss, inp)  # expect: GG104
print(saliency.abs().mean(0))
