# Source: https://apxml.com/courses/getting-started-with-pytorch/chapter-3-automatic-differentiation-autograd/accessing-gradients-grad
"""The course page "Accessing Gradients (.grad)": after backward(), PyTorch stores gradients in
.grad of the leaf tensors with requires_grad=True (parameters, inputs created directly), "as
opposed to intermediate tensors resulting from operations", whose .grad stays None (torch warns
"The .grad attribute of a Tensor that is not a leaf Tensor is being accessed"). A two-layer
network written with raw weight tensors, as in the page's examples, whose training loop monitors
the gradient norm of the hidden activation: the intermediate's .grad is None and the monitor
fails on it."""
import torch

torch.manual_seed(0)

w1 = torch.randn(4, 8, requires_grad=True)
b1 = torch.zeros(8, requires_grad=True)
w2 = torch.randn(8, 1, requires_grad=True)
b2 = torch.zeros(1, requires_grad=True)
params = [w1, b1, w2, b2]


def forward(x):
    hidden = torch.relu(x @ w1 + b1)
    return hidden @ w2 + b2, hidden


def monitor(name, t):
    print(name, "grad norm", t.grad.norm().item())  # expect: GG106


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
