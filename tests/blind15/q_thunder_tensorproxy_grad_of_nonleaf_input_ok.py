# Source: https://github.com/Lightning-AI/lightning-thunder/issues/1205
"""Fixed twin of q_thunder_tensorproxy_grad_of_nonleaf_input_bug.py. lightning-thunder's `tensorproxy()`
read `t.grad` of every input tensor, so a non-leaf input (`torch.randn(3, requires_grad=True) + 1`,
or activations reaching a jitted subgraph) made torch warn about the `.grad` of a non-leaf tensor.
Fix (PR #1210, merged): `if t.is_leaf and t.grad is not None:`, so only leaves (which do hold
gradients, like the block's parameters after a step) have their `.grad` proxied. thunder is a small
stand-in written in the file.
"""
import torch
import torch.nn as nn

# ----------------------------- stand-in: thunder -----------------------------


class TensorProxy:
    def __init__(self, name, shape, device, dtype, requires_grad, grad=None):
        self.name, self.shape, self.device, self.dtype = name, shape, device, dtype
        self.requires_grad, self.grad = requires_grad, grad

    def __repr__(self):
        return f"<TensorProxy {self.name} {tuple(self.shape)}{' grad' if self.grad is not None else ''}>"


def tensorproxy(t: torch.Tensor, /, *, name, history=None) -> TensorProxy:
    device = t.device
    dtype = t.dtype

    grad = None
    if t.is_leaf and t.grad is not None:
        grad_pr = None
        if history is not None:
            grad_pr = (history, "grad")
        grad = tensorproxy(t.grad, name=f"{name}_grad", history=grad_pr)

    return TensorProxy(name, t.shape, device, dtype, t.requires_grad, grad=grad)


class ThunderModule:
    def __init__(self, fn):
        self._fn = fn
        self._traces = []

    def _proxify(self, args):
        proxies = [tensorproxy(a, name=f"t_{i}", history=("args", i)) if isinstance(a, torch.Tensor) else a
                   for i, a in enumerate(args)]
        if isinstance(self._fn, nn.Module):
            proxies += [tensorproxy(p, name=f"t_{n.replace('.', '_')}", history=("params", n))
                        for n, p in self._fn.named_parameters()]
        return proxies

    def __call__(self, *args):
        self._traces.append(self._proxify(args))
        return self._fn(*args)


def jit(fn):
    return ThunderModule(fn)


thunder = type("thunder", (), {"jit": staticmethod(jit)})

# ----------------------------- the report, and a jitted block in a training loop -----------------------------


def foo(x):
    return x


x = torch.randn(3, requires_grad=True) + 1
thunder.jit(foo)(x)


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(dim, 4 * dim), nn.Linear(4 * dim, dim)

    def forward(self, h):
        return h + self.fc2(torch.relu(self.fc1(h)))


torch.manual_seed(0)
embed, block, head = nn.Linear(8, 16), Block(16), nn.Linear(16, 1)
jblock = thunder.jit(block)
params = list(embed.parameters()) + list(block.parameters()) + list(head.parameters())
opt = torch.optim.SGD(params, lr=0.1)
for step in range(2):
    inputs, targets = torch.randn(4, 8), torch.randn(4, 1)
    h = embed(inputs)
    out = head(jblock(h))
    loss = nn.functional.mse_loss(out, targets)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(step, loss.item(), jblock._traces[-1][0])
