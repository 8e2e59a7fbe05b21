# Source: https://openillumi.com/en/en-pytorch-autograd-view-leaf-error-fix
"""The post "Fix PyTorch Autograd Error: 'A View of a Leaf...' Explained & Solved": a parameter
container keeps its values in one leaf tensor `pdfvec` that requires grad, and small accessor
objects expose single entries through a property whose setter writes
`self.param.pdfvec[self.key] = value`. The plain assignment raises "a view of a leaf Variable that
requires grad is being used in an in-place operation". Here a mixture of Gaussians is fitted by
gradient descent on its log-weights, and after each epoch the first component's weight is reset
through the setter (as a user would pin a value by hand)."""
import math

import torch


class ParamVector:
    """All trainable numbers of the model in one leaf tensor."""

    def __init__(self, values):
        self.pdfvec = torch.tensor(values, requires_grad=True)


class ParamEntry:
    """One named entry of a ParamVector, read and written like a plain attribute."""

    def __init__(self, param, key):
        self.param = param
        self.key = key

    @property
    def value(self):
        return self.param.pdfvec[self.key]

    @value.setter
    def value(self, value):
        self.param.pdfvec[self.key] = value  # expect: GG108


class GaussianMixture:
    def __init__(self, n_components):
        self.param = ParamVector([0.0] * n_components)
        self.log_weights = [ParamEntry(self.param, k) for k in range(n_components)]
        self.means = torch.linspace(-2.0, 2.0, n_components)

    def log_likelihood(self, x):
        logw = torch.log_softmax(self.param.pdfvec, dim=0)
        comp = -0.5 * (x[:, None] - self.means[None, :]) ** 2 - 0.5 * math.log(2 * math.pi)
        return torch.logsumexp(logw[None, :] + comp, dim=1).mean()


mixture = GaussianMixture(n_components=3)
optimizer = torch.optim.SGD([mixture.param.pdfvec], lr=0.5)
data = torch.randn(64) + 1.5

for epoch in range(3):
    optimizer.zero_grad()
    loss = -mixture.log_likelihood(data)
    loss.backward()
    optimizer.step()
    mixture.log_weights[0].value = 0.0  # pin the first component
    print(epoch, loss.item())
