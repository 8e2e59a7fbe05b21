# Source: https://www.codetd.com/en/article/15951456
"""The codetd article "param.grad, requires_grad, grad_fn, grad/gradient are None?" shows that a
tensor created with requires_grad=True and then rebound as `x = x.view(2, 2)` is no longer a leaf,
so after `out.backward()` its `.grad` is None (torch warns on the access). Here a hand-written
linear regressor reshapes its flat weight vector the same way when building its parameter dict; the
manual SGD helper then reads `p.grad` of the reshaped view, gets None and `lr * None` raises a
TypeError. Fix (the article's point: gradients live on the leaf): keep the leaf and reshape it in
the forward pass.
"""
import torch


def make_params(n_in, n_out):
    w = torch.randn(n_in * n_out, requires_grad=True)
    w = w.view(n_in, n_out)
    b = torch.zeros(n_out, requires_grad=True)
    return {"w": w, "b": b}


def forward(params, x):
    return x @ params["w"] + params["b"]


def sgd_step(params, lr):
    for name, p in params.items():
        p.data -= lr * p.grad  # expect: GG106
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
