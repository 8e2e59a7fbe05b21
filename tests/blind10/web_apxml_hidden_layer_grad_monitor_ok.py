# Source: https://apxml.com/courses/getting-started-with-pytorch/chapter-3-automatic-differentiation-autograd/accessing-gradients-grad
"""An intermediate tensor's gradient is kept only when asked for: the forward calls
hidden.retain_grad(), so after backward() hidden.grad holds the gradient the monitor reads (the
page's leaf rule left as it is; retain_grad is PyTorch's documented way for non-leaf tensors)."""
import torch

torch.manual_seed(0)

w1 = torch.randn(4, 8, requires_grad=True)
b1 = torch.zeros(8, requires_grad=True)
w2 = torch.randn(8, 1, requires_grad=True)
b2 = torch.zeros(1, requires_grad=True)
params = [w1, b1, w2, b2]


def forward(x):
    hidden = torch.relu(x @ w1 + b1)
    hidden.retain_grad()
    return hidden @ w2 + b2, hidden


def monitor(name, t):
    print(name, "grad norm", t.grad.norm().item())


for step in range(3):
    x, y = torch.randn(6, 4), torch.randn(6, 1)
    pred, hidden = forward(x)
    loss = ((pred - y) ** 2).mean()
    loss.backward()
    monitor("hidden", hidden)
    with torch.no_grad():
        for p in params:
            p -= 0.01 * p.grad
            p.grad = None
