# Source: https://github.com/cornellius-gp/gpytorch/pull/1203
"""gpytorch's LazyTensor._symeig before this PR: the eigendecomposition of the kernel matrix is
done in double precision and negative eigenvalues are chopped with the in-place
`evals.clamp_min_(0.0)` before casting back. The symmetric eigendecomposition saved its
eigenvalues for its backward, and clamp_min_ overwrites them, so backpropagating through _symeig
fails ("In place _symeig clamping fails to have correct backwards"; torch 2.13 raises "one of the
variables needed for gradient computation has been modified by an inplace operation"; the PR
replaces it with the out-of-place clamp_min). _symeig follows gpytorch's (with torch.linalg.eigh
for the removed torch.symeig); an exact GP with an RBF kernel whose marginal log likelihood uses
the eigendecomposition, trained on random 1-d data, stands in for the models that call it."""
import math

import torch
import torch.nn as nn


class NonLazyTensor:
    def __init__(self, tensor):
        self.tensor = tensor
        self.dtype = tensor.dtype

    def evaluate(self):
        return self.tensor

    def _symeig(self, eigenvectors=False):
        dtype = self.dtype  # perform decomposition in double precision for numerical stability
        evals, evecs = torch.linalg.eigh(self.evaluate().to(dtype=torch.double))
        # chop any negative eigenvalues. TODO: warn if evals are significantly negative
        evals = evals.clamp_min_(0.0).to(dtype=dtype)
        if eigenvectors:
            evecs = NonLazyTensor(evecs.to(dtype=dtype))
        else:
            evecs = None
        return evals, evecs

    def symeig(self, eigenvectors=False):
        return self._symeig(eigenvectors=eigenvectors)


class RBFKernel(nn.Module):
    def __init__(self):
        super().__init__()
        self.raw_lengthscale = nn.Parameter(torch.zeros(1))
        self.raw_outputscale = nn.Parameter(torch.zeros(1))

    def forward(self, x1, x2):
        lengthscale = nn.functional.softplus(self.raw_lengthscale)
        outputscale = nn.functional.softplus(self.raw_outputscale)
        dist = (x1.unsqueeze(-2) - x2.unsqueeze(-3)).pow(2).sum(-1)
        return NonLazyTensor(outputscale * torch.exp(-0.5 * dist / lengthscale ** 2))


class ExactGPModel(nn.Module):
    def __init__(self, train_x, train_y):
        super().__init__()
        self.train_x, self.train_y = train_x, train_y
        self.covar_module = RBFKernel()
        self.raw_noise = nn.Parameter(torch.tensor([-2.0]))

    def marginal_log_likelihood(self):
        noise = nn.functional.softplus(self.raw_noise)
        covar = self.covar_module(self.train_x, self.train_x).evaluate()
        covar = NonLazyTensor(covar + noise * torch.eye(len(self.train_x)))
        evals, evecs = covar.symeig(eigenvectors=True)
        proj = evecs.evaluate().transpose(-1, -2) @ self.train_y
        inv_quad = (proj.pow(2) / evals).sum()
        logdet = evals.log().sum()
        n = len(self.train_y)
        return -0.5 * (inv_quad + logdet + n * math.log(2 * math.pi)) / n


train_x = torch.linspace(0, 1, 20).unsqueeze(-1)
train_y = torch.sin(train_x.squeeze(-1) * (2 * math.pi)) + 0.1 * torch.randn(20)
model = ExactGPModel(train_x, train_y)
optimizer = torch.optim.Adam(model.parameters(), lr=0.1)
for i in range(5):
    optimizer.zero_grad()
    loss = -model.marginal_log_likelihood()
    loss.backward()  # expect: GG103
    optimizer.step()
