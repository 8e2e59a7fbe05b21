# Source: https://github.com/cornellius-gp/gpytorch/issues/679
"""GPyTorch's simple GP regression example as the issue says it works: N x 1 inputs but targets of
shape N, the event shape of the GP's MultivariateNormal (the issue breaks it only by unsqueezing
the data), so the marginal log likelihood is a scalar and loss.backward() needs no explicit
gradient. The example's model and loop are gpytorch's with its modules written out in torch, on
20 points."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import MultivariateNormal


class ConstantMean(nn.Module):
    def __init__(self):
        super().__init__()
        self.constant = nn.Parameter(torch.zeros(1))

    def forward(self, x):
        return self.constant.expand(x.shape[0])


class ScaleRBFKernel(nn.Module):
    def __init__(self):
        super().__init__()
        self.raw_lengthscale = nn.Parameter(torch.zeros(1))
        self.raw_outputscale = nn.Parameter(torch.zeros(1))

    def forward(self, x1, x2):
        lengthscale = F.softplus(self.raw_lengthscale)
        dist = torch.cdist(x1 / lengthscale, x2 / lengthscale).pow(2)
        return F.softplus(self.raw_outputscale) * torch.exp(-0.5 * dist)


class GaussianLikelihood(nn.Module):
    def __init__(self):
        super().__init__()
        self.raw_noise = nn.Parameter(torch.zeros(1))

    def forward(self, output):
        noise = F.softplus(self.raw_noise) + 1e-4
        covar = output.covariance_matrix + noise * torch.eye(output.loc.shape[-1])
        return MultivariateNormal(output.loc, covar, validate_args=False)


class ExactGPModel(nn.Module):
    def __init__(self, train_x, train_y, likelihood):
        super(ExactGPModel, self).__init__()
        self.train_inputs, self.train_targets, self.likelihood = train_x, train_y, likelihood
        self.mean_module = ConstantMean()
        self.covar_module = ScaleRBFKernel()

    def forward(self, x):
        mean_x = self.mean_module(x)
        covar_x = self.covar_module(x, x) + 1e-6 * torch.eye(x.shape[0])
        return MultivariateNormal(mean_x, covar_x, validate_args=False)


class ExactMarginalLogLikelihood(nn.Module):
    def __init__(self, likelihood, model):
        super().__init__()
        self.likelihood, self.model = likelihood, model

    def forward(self, function_dist, target):
        output = self.likelihood(function_dist)
        res = output.log_prob(target)
        num_data = function_dist.event_shape.numel()
        return res.div_(num_data)


train_x = torch.linspace(0, 1, 20).unsqueeze(-1)
# targets of shape N, the GP's event shape
train_y = (torch.sin(train_x * (2 * math.pi)) + torch.randn(train_x.size()) * 0.2).squeeze(-1)

# initialize likelihood and model
likelihood = GaussianLikelihood()
model = ExactGPModel(train_x, train_y, likelihood)

model.train()
likelihood.train()
optimizer = torch.optim.Adam(list(model.parameters()) + list(likelihood.parameters()), lr=0.1)
mll = ExactMarginalLogLikelihood(likelihood, model)

for i in range(5):
    optimizer.zero_grad()
    output = model(train_x)
    loss = -mll(output, train_y)
    loss.backward()
    print('Iter %d/%d - Loss: %.3f' % (i + 1, 5, loss.item()))
    optimizer.step()
