# Source: https://github.com/cornellius-gp/gpytorch/issues/774
"""The reporter's batched-GP cross-validation with the reduction gpytorch's batch-GP examples
use: loss = -mll_cv(output, ys).sum() adds the folds' losses (the folds' parameters are
independent, so each fold gets its own gradient) and backward runs on a scalar."""
import math

import torch
import torch.nn as nn
from torch.distributions import MultivariateNormal


class GaussianLikelihood(nn.Module):
    def __init__(self, batch_shape=torch.Size()):
        super().__init__()
        self.raw_noise = nn.Parameter(torch.zeros(*batch_shape, 1))

    @property
    def noise(self):
        return nn.functional.softplus(self.raw_noise) + 1e-4

    def forward(self, mvn):
        n = mvn.mean.shape[-1]
        covar = mvn.covariance_matrix + self.noise.unsqueeze(-1) * torch.eye(n)
        return MultivariateNormal(mvn.mean, covariance_matrix=covar)


class ExactGPModel(nn.Module):
    def __init__(self, train_x, train_y, likelihood, batch_shape):
        super().__init__()
        self.train_inputs, self.train_targets, self.likelihood = train_x, train_y, likelihood
        self.constant = nn.Parameter(torch.zeros(*batch_shape, 1))
        self.raw_lengthscale = nn.Parameter(torch.zeros(*batch_shape, 1, 1))
        self.raw_outputscale = nn.Parameter(torch.zeros(*batch_shape, 1, 1))

    def forward(self, x):
        mean_x = self.constant.expand(*x.shape[:-1])
        lengthscale = nn.functional.softplus(self.raw_lengthscale)
        outputscale = nn.functional.softplus(self.raw_outputscale)
        sq = torch.cdist(x / lengthscale, x / lengthscale).pow(2)
        covar_x = outputscale * torch.exp(-0.5 * sq) + 1e-5 * torch.eye(x.shape[-2])
        return MultivariateNormal(mean_x, covariance_matrix=covar_x)


class ExactMarginalLogLikelihood(nn.Module):
    def __init__(self, likelihood, model):
        super().__init__()
        self.likelihood, self.model = likelihood, model

    def forward(self, function_dist, target):
        output = self.likelihood(function_dist)
        res = output.log_prob(target)
        num_data = target.size(-1)
        return res.div_(num_data)


def make_folds(n_folds=10, n=12, d=3):
    X = torch.rand(n_folds * n, d)
    y = torch.sin(X.sum(-1) * 2 * math.pi) + 0.1 * torch.randn(n_folds * n)
    return X.view(n_folds, n, d).contiguous(), y.view(n_folds, n).contiguous()


Xs, ys = make_folds()
likelihood_cv = GaussianLikelihood(batch_shape=torch.Size([10]))
model_cv = ExactGPModel(Xs, ys, likelihood_cv, batch_shape=torch.Size([10]))
mll_cv = ExactMarginalLogLikelihood(likelihood_cv, model_cv)
optimizer = torch.optim.Adam(list(model_cv.parameters()) + list(likelihood_cv.parameters()), lr=0.1)
training_iterations = 3


def train():
    for i in range(training_iterations):
        optimizer.zero_grad()
        output = model_cv(Xs)
        loss = -mll_cv(output, ys).sum()
        loss.backward()
        if not i % 10:
            print('Iter %d/%d - Loss: %.3f' % (i + 1, training_iterations, loss.item()))
        optimizer.step()


train()
