# Source: https://github.com/EffiSciencesResearch/ML4G-2.0/pull/2
"""ML4G 2.0 PyTorch tutorial notebook (workshops/pytorch_tuto): fit a cubic to sin(x), then plot.

The notebook defines ``plot(predicted_y, true_y, x)`` (matplotlib) and solves the same exercise
three times: with numpy, with plain tensors (hand-written gradients) and with autograd
(``a, b, c, d`` created with ``requires_grad=True``), then with ``nn.Sequential``.  Each cell ends
with ``plot(predicted_y, true_y, x)``.  In the autograd cell ``predicted_y`` is computed from the
weights outside ``no_grad`` and requires grad; matplotlib converts it with numpy
(``np.atleast_1d`` -> ``Tensor.__array__`` -> ``.numpy()``) and torch raises "Can't call numpy()
on Tensor that requires grad".  The PR "Fix minor bug Pytorch Tutorial that prevented plotting
Tensors with grad" fixes it by detaching what is plotted.

Here the notebook's solutions are filled in, epochs are reduced, and ``plt`` is a small stand-in
for matplotlib.pyplot that converts its data with numpy as matplotlib does.
"""
import numpy as np
import torch


class _Pyplot:
    """Stand-in for matplotlib.pyplot: plot() turns every data argument into an ndarray."""

    def __init__(self):
        self.lines = []

    def plot(self, *args, label=None):
        data = [np.atleast_1d(a) for a in args]  # expect: GG107
        self.lines.append((label, data))

    def xlabel(self, s):
        pass

    def ylabel(self, s):
        pass

    def legend(self):
        pass

    def show(self):
        self.lines = []


plt = _Pyplot()


def plot(predicted_y, true_y, x):
    """Plot the predictions and the actual data points"""
    plt.plot(x, true_y, label="y (actual)")
    plt.plot(x, predicted_y, label="y_pred (predicted)")
    plt.xlabel("x")
    plt.ylabel("y")
    plt.legend()
    plt.show()


np.random.seed(0)
torch.manual_seed(0)

# ---- Numpy ----
x = np.linspace(-np.pi, np.pi, 1000)
true_y = np.sin(x)

a = np.random.randn()
b = np.random.randn()
c = np.random.randn()
d = np.random.randn()

learning_rate = 1e-3
epochs = 300
for t in range(epochs):
    predicted_y = a + b * x + c * x ** 2 + d * x ** 3
    loss = np.square(predicted_y - true_y).mean()
    if t % 100 == 99:
        print(t, loss)

    grad_predicted_y = 2.0 * (predicted_y - true_y)
    grad_a = grad_predicted_y.mean()
    grad_b = (grad_predicted_y * x).mean()
    grad_c = (grad_predicted_y * x ** 2).mean()
    grad_d = (grad_predicted_y * x ** 3).mean()

    a -= learning_rate * grad_a
    b -= learning_rate * grad_b
    c -= learning_rate * grad_c
    d -= learning_rate * grad_d

print(f"Result: y = {a} + {b} x + {c} x^2 + {d} x^3")
plot(predicted_y, true_y, x)

# ---- PyTorch: Tensors ----
x = torch.linspace(-torch.pi, torch.pi, 1000)
true_y = torch.sin(x)

a = torch.randn(())
b = torch.randn(())
c = torch.randn(())
d = torch.randn(())

for t in range(epochs):
    predicted_y = a + b * x + c * x ** 2 + d * x ** 3
    loss = (predicted_y - true_y).pow(2).mean()
    if t % 100 == 99:
        print(t, loss)

    grad_predicted_y = 2.0 * (predicted_y - true_y)
    grad_a = grad_predicted_y.mean()
    grad_b = (grad_predicted_y * x).mean()
    grad_c = (grad_predicted_y * x ** 2).mean()
    grad_d = (grad_predicted_y * x ** 3).mean()

    a -= learning_rate * grad_a
    b -= learning_rate * grad_b
    c -= learning_rate * grad_c
    d -= learning_rate * grad_d

print(f"Result: y = {a.item()} + {b.item()} x + {c.item()} x^2 + {d.item()} x^3")
plot(predicted_y, true_y, x)

# ---- PyTorch: Tensors and autograd ----
x = torch.linspace(-torch.pi, torch.pi, 1000)
true_y = torch.sin(x)

a = torch.randn((), requires_grad=True)
b = torch.randn((), requires_grad=True)
c = torch.randn((), requires_grad=True)
d = torch.randn((), requires_grad=True)

for t in range(epochs):
    predicted_y = a + b * x + c * x ** 2 + d * x ** 3
    loss = (predicted_y - true_y).pow(2).mean()
    if t % 100 == 99:
        print(t, loss.item())

    loss.backward()

    with torch.no_grad():
        a -= learning_rate * a.grad
        b -= learning_rate * b.grad
        c -= learning_rate * c.grad
        d -= learning_rate * d.grad

        a.grad = None
        b.grad = None
        c.grad = None
        d.grad = None

print(f"Result: y = {a.item()} + {b.item()} x + {c.item()} x^2 + {d.item()} x^3")
plot(predicted_y, true_y, x)

# ---- PyTorch: nn ----
x = torch.linspace(-torch.pi, torch.pi, 1000)
true_y = torch.sin(x)
powers = torch.tensor([1, 2, 3])
powers_of_x = x.unsqueeze(-1).pow(powers)

model = torch.nn.Sequential(
    torch.nn.Linear(3, 1),
    torch.nn.Flatten(start_dim=0, end_dim=1),
)
loss_fn = torch.nn.MSELoss(reduction="mean")

for t in range(epochs):
    predicted_y = model(powers_of_x)
    loss = loss_fn(predicted_y, true_y)
    if t % 100 == 99:
        print(t, loss.item())

    model.zero_grad()
    loss.backward()

    with torch.no_grad():
        for param in model.parameters():
            param -= learning_rate * param.grad

linear_layer = model[0]
print(
    f'Result: y = {linear_layer.bias.item()} + {linear_layer.weight[:, 0].item()} x + {linear_layer.weight[:, 1].item()} x^2 + {linear_layer.weight[:, 2].item()} x^3'
)
plot(predicted_y, true_y, x)
