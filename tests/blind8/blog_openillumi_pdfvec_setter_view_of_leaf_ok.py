# Source: https://openillumi.com/en/en-pytorch-autograd-view-leaf-error-fix
"""The fix the post recommends: the setter writes the entry under `torch.no_grad()`, so the
assignment is not recorded by autograd and the leaf stays a leaf (the post names `.data` as the
quicker, less safe alternative)."""
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
        with torch.no_grad():
            self.param.pdfvec[self.key] = value


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
