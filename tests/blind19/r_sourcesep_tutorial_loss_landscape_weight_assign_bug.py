# Source: https://github.com/source-separation/tutorial/issues/18
"""Source-separation tutorial, "Gradient descent" chapter: brute-force loss landscape of a Line.

The notebook builds ``Line`` (one ``nn.Linear(1, 1)``), makes noisy linear training data, and
maps the loss landscape by writing every candidate slope/intercept straight into the layer:
``line.layer.weight[0, 0] = m_hat``.  The weight is a leaf Parameter that requires grad, and
indexing assignment is an in-place copy into a view of it, so torch raises
"a view of a leaf Variable that requires grad is being used in an in-place operation" on the first
assignment.  The issue reports that every section of the page crashed this way.

Fix (the tutorial's, PR #26, issue 18): do the assignments (and the landscape forward passes) inside
``with torch.no_grad():``.  Stand-ins: ``plt`` for matplotlib (drawing is a no-op), ``gif.frame``,
and ``nussl.utils.seed``; the grid is smaller than the notebook's 100 x 100.
"""
import numpy as np
import torch
from torch import nn


class _Pyplot:
    def __getattr__(self, name):
        return lambda *args, **kwargs: None


plt = _Pyplot()


class gif:
    @staticmethod
    def frame(fn):
        def wrapper(*args, **kwargs):
            fn(*args, **kwargs)
            return None
        return wrapper


def seed(random_seed):  # nussl.utils.seed
    np.random.seed(random_seed)
    torch.manual_seed(random_seed)


seed(0)
to_numpy = lambda x: x.detach().numpy()
to_tensor = lambda x: torch.from_numpy(x).reshape(-1, 1).float()


class Line(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(1, 1)

    def forward(self, x):
        y = self.layer(x)
        return y


line = Line()
x = torch.randn(100, 1)
y = line(x)

plt.title("Prediction of network at iteration. 0")
plt.scatter(to_numpy(x), to_numpy(y))
plt.show()

for n, p in line.named_parameters():
    print(n, p)

m = np.random.randn()
b = np.random.randn()
x = np.linspace(-10, 10, 100)
noise = np.random.normal(loc=0, scale=0.1, size=100)

y = m * x + b + noise

y_hat = line(to_tensor(x))
loss = (y_hat - to_tensor(y)).abs()
print(loss.mean())

possible_m = np.linspace(-2, 2, 30)
possible_b = np.linspace(-2, 2, 30)
loss = np.empty((
    possible_m.shape[0],
    possible_b.shape[0]
))

for i, m_hat in enumerate(possible_m):
    for j, b_hat in enumerate(possible_b):
        line.layer.weight[0, 0] = m_hat  # expect: GG108
        line.layer.bias[0] = b_hat
        y_hat = line(to_tensor(x))
        _loss = (y_hat - to_tensor(y)).abs().mean()
        loss[i, j] = _loss

plt.title('2D Visualization of Loss Landscape')
plt.pcolormesh(possible_m, possible_b, loss, shading='auto')
plt.show()

idx = np.unravel_index(np.argmin(loss, axis=None), loss.shape)
m_hat = possible_m[idx[0]]
b_hat = possible_b[idx[1]]
print(f"Loss minimum of {loss.min():-2f} at \n\t m_hat={m_hat:0.2f}, b_hat={b_hat:-.2f}")
print(f"Actual m, b: \n\t m={m:.2f}, b={b:.2f}")

line = Line()
with torch.no_grad():
    line.layer.weight[0, 0] = m_hat
    line.layer.bias[0] = b_hat

y_hat = line(to_tensor(x))
_loss = (y_hat - to_tensor(y)).abs().mean()
_loss.backward()
print(line.layer.weight.grad, line.layer.bias.grad)

N_ITER = 100
LEARNING_RATE = 0.01
line = Line()

frames = []


@gif.frame
def plot(i):
    plt.figure()
    y_hat = line(to_tensor(x))
    plt.title("Training data + network predictions")
    plt.scatter(x, y, label='Training data')
    plt.scatter(x, to_numpy(y_hat), label='Network predictions')
    plt.legend()


for i in range(N_ITER):
    line.zero_grad()
    y_hat = line(to_tensor(x))
    _loss = (y_hat - to_tensor(y)).abs().mean()
    _loss.backward()

    for n, p in line.named_parameters():
        p.data += - LEARNING_RATE * p.grad

    frame = plot(i)
    frames.append(frame)
print(_loss.item())
