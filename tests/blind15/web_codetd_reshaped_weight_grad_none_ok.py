# Source: https://www.codetd.com/en/article/15951456
"""The hand-written regressor with the fix (the article's point: only leaves get `.grad`): the
parameter dict keeps the flat leaf weight, and the forward pass reshapes it, so the manual SGD
helper reads the leaves' gradients.
"""
import torch


def make_params(n_in, n_out):
    w = torch.randn(n_in * n_out, requires_grad=True)
    b = torch.zeros(n_out, requires_grad=True)
    return {"w": w, "b": b, "shape": (n_in, n_out)}


def forward(params, x):
    return x @ params["w"].view(*params["shape"]) + params["b"]


def sgd_step(params, lr):
    for name in ("w", "b"):
        p = params[name]
        p.data -= lr * p.grad
        p.grad = None


torch.manual_seed(0)
x = torch.randn(32, 2)
y = x @ torch.tensor([[1.0, -2.0], [0.5, 3.0]]) + 0.1
params = make_params(2, 2)
for epoch in range(5):
    out = forward(params, x)
    loss = ((out - y) ** 2).mean()
    loss.backward()
    sgd_step(params, lr=0.1)
    print(epoch, loss.item())
