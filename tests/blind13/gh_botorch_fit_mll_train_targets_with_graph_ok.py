# Source: https://github.com/meta-pytorch/botorch/issues/2253
"""The user's two-GP BoTorch fit, with the fix the maintainers gave: the training data are
detached before they go into the models (`train_x.detach()`, `train_obj.detach()`,
`train_con.detach()`), so each evaluation of the marginal log likelihood builds its own graph
from the GP hyperparameters only. botorch's SingleTaskGP (Standardize outcome transform, batched
multi-output exact GP), ModelListGP, the MLL and fit_gpytorch_mll's closure/optimizer loop are
small stand-ins written here.
"""
import math

import torch
import torch.nn as nn


class Standardize(nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, Y):
        self.means = Y.mean(dim=0, keepdim=True)
        self.stdvs = Y.std(dim=0, keepdim=True).clamp_min(1e-8)
        return (Y - self.means) / self.stdvs


class SingleTaskGP(nn.Module):
    """Batched exact GP, one independent output per column of train_Y (RBF kernel, constant mean)."""
    def __init__(self, train_X, train_Y):
        super().__init__()
        m = train_Y.shape[-1]
        self.outcome_transform = Standardize(m)
        train_Y = self.outcome_transform(train_Y)
        self.train_inputs = (train_X,)
        self.train_targets = train_Y.transpose(0, 1)  # (m, n)
        self.num_outputs = m
        self.raw_lengthscale = nn.Parameter(torch.zeros(m, 1, train_X.shape[-1]))
        self.raw_outputscale = nn.Parameter(torch.zeros(m))
        self.constant = nn.Parameter(torch.zeros(m))
        self.likelihood = GaussianLikelihood(m)

    def forward(self, X):
        ls = nn.functional.softplus(self.raw_lengthscale)
        x = X.unsqueeze(0) / ls  # (m, n, d)
        sq = torch.cdist(x, x) ** 2
        covar = nn.functional.softplus(self.raw_outputscale)[:, None, None] * torch.exp(-0.5 * sq)
        mean = self.constant[:, None].expand(-1, X.shape[0])
        return mean, covar


class GaussianLikelihood(nn.Module):
    def __init__(self, m):
        super().__init__()
        self.raw_noise = nn.Parameter(torch.full((m,), -2.0))

    def forward(self, mean, covar):
        noise = nn.functional.softplus(self.raw_noise) + 1e-4
        return mean, covar + noise[:, None, None] * torch.eye(covar.shape[-1])


class ModelListGP(nn.Module):
    def __init__(self, *gp_models):
        super().__init__()
        self.models = nn.ModuleList(gp_models)
        self.likelihood = nn.ModuleList([m.likelihood for m in gp_models])


class ExactMarginalLogLikelihood(nn.Module):
    def __init__(self, likelihood, model):
        super().__init__()
        self.likelihood, self.model = likelihood, model

    def forward(self, output, target):
        mean, covar = self.likelihood(*output)
        L = torch.linalg.cholesky(covar)
        diff = (target - mean).unsqueeze(-1)
        alpha = torch.cholesky_solve(diff, L)
        n = target.shape[-1]
        ll = -0.5 * (diff * alpha).sum((-1, -2)) - torch.log(torch.diagonal(L, dim1=-2, dim2=-1)).sum(-1) \
            - 0.5 * n * math.log(2 * math.pi)
        return (ll / n).sum()


class SumMarginalLogLikelihood(nn.Module):
    def __init__(self, likelihood, model):
        super().__init__()
        self.likelihood, self.model = likelihood, model
        self.mlls = nn.ModuleList([ExactMarginalLogLikelihood(m.likelihood, m) for m in model.models])

    def forward(self):
        return sum(mll(m(*m.train_inputs), m.train_targets) for mll, m in zip(self.mlls, self.model.models))


def get_loss_closure_with_grads(mll, parameters):
    """Stand-in for botorch's ForwardBackwardClosure: forward, then backward, then read .grad."""
    def closure():
        mll.zero_grad()
        loss = -mll()
        loss.backward()
        grads = tuple(p.grad for p in parameters)
        return loss, grads
    return closure


def fit_gpytorch_mll(mll, step_limit=5, lr=0.1):
    """Stand-in for botorch.fit_gpytorch_mll: minimise the negative MLL with a closure per step."""
    mll.train()
    parameters = [p for p in mll.parameters() if p.requires_grad]
    closure = get_loss_closure_with_grads(mll, parameters)
    optimizer = torch.optim.Adam(parameters, lr=lr)
    for step in range(step_limit):
        loss, grads = closure()
        optimizer.step()
    mll.eval()
    return mll


train_x = torch.randn(30, 6, requires_grad=True)

train_obj = 3 * train_x + train_x ** 2
train_con = 4 * train_x - train_x ** 3

print(train_obj.grad_fn)
print(train_con.grad_fn)

model_obj = SingleTaskGP(train_x.detach(), train_obj.detach()).to(train_x)
model_con = SingleTaskGP(train_x.detach(), train_con.detach()).to(train_x)

model = ModelListGP(model_obj, model_con)
mll = SumMarginalLogLikelihood(model.likelihood, model)

fit_gpytorch_mll(mll)
