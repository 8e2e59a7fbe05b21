# Source: https://github.com/cornellius-gp/gpytorch/commit/b003438a4755bd2e21e0b67fd0214db16761f769
"""GPyTorch fantasy model (before commit b003438a), back-propagated through as in
a knowledge-gradient / variance-reduction acquisition optimisation.

`DefaultPredictionStrategy.get_fantasy_strategy` builds the new root
`new_root = [L 0; lower_left schur_root]`, takes `Q, R = qr(new_root)` and,
when R is nearly singular, adds jitter in place through a diagonal view:
`Rdiag = torch.diagonal(R); Rdiag[zeroish] = 1e-6`.  R is an output of QR and
is saved by QR's backward.  With noise-free observations and a candidate
initialised at an observed point (the schur complement is ~0) the jitter branch
runs; when the acquisition value (posterior variance of the fantasy model,
computed from the new covar cache with fast_pred_var) is back-propagated to the
candidate, autograd finds R modified: "one of the variables needed for gradient
computation has been modified by an inplace operation".  The commit message:
"if one back-propagated through the fantasy model after jitter was added to the
post-QR solve, this would result in autograd failures because of in-place
modification of variables".

The lazy-tensor machinery is replaced by dense tensors; torch.qr /
torch.triangular_solve / torch.solve are spelled torch.linalg.qr /
solve_triangular / solve (removed or deprecated in recent torch).
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class settings:
    fast_pred_var = True


class RBFKernel(nn.Module):
    def __init__(self):
        super().__init__()
        self.raw_lengthscale = nn.Parameter(torch.zeros(1, 1, dtype=torch.float64))
        self.raw_outputscale = nn.Parameter(torch.zeros((), dtype=torch.float64))

    @property
    def lengthscale(self):
        return F.softplus(self.raw_lengthscale) + 0.2

    @property
    def outputscale(self):
        return F.softplus(self.raw_outputscale) + 0.5

    def forward(self, x1, x2):
        x1_ = x1.div(self.lengthscale)
        x2_ = x2.div(self.lengthscale)
        sq = (x1_.unsqueeze(-2) - x2_.unsqueeze(-3)).pow(2).sum(-1)
        return self.outputscale * torch.exp(-0.5 * sq)


class ConstantMean(nn.Module):
    def __init__(self):
        super().__init__()
        self.constant = nn.Parameter(torch.zeros((), dtype=torch.float64))

    def forward(self, x):
        return self.constant.expand(x.shape[:-1])


class MultivariateNormal(object):
    def __init__(self, mean, covariance_matrix):
        self.mean = mean
        self.loc = mean
        self.covariance_matrix = covariance_matrix
        self.lazy_covariance_matrix = covariance_matrix

    @property
    def event_shape(self):
        return self.mean.shape[-1:]


class FixedNoiseGaussianLikelihood(nn.Module):
    """Noise-free observations (BoTorch style fixed, tiny noise)."""

    def __init__(self, noise):
        super().__init__()
        self.noise = noise

    def forward(self, mvn, *args, **kwargs):
        n = mvn.mean.shape[-1]
        eye = torch.eye(n, dtype=mvn.mean.dtype)
        return MultivariateNormal(mvn.mean, mvn.covariance_matrix + self.noise * eye)

    def get_fantasy_likelihood(self, **kwargs):
        return FixedNoiseGaussianLikelihood(self.noise)


def root_decomposition(mat):
    evals, evecs = torch.linalg.eigh(mat)
    return evecs * evals.clamp_min(0).sqrt().unsqueeze(-2)


def root_inv_decomposition(mat):
    evals, evecs = torch.linalg.eigh(mat)
    return evecs / evals.clamp_min(1e-10).sqrt().unsqueeze(-2)


class DefaultPredictionStrategy(object):
    def __init__(self, train_inputs, train_prior_dist, train_labels, likelihood, root=None, inv_root=None):
        self.train_inputs = train_inputs
        self.train_prior_dist = train_prior_dist
        self.train_labels = train_labels
        self.likelihood = likelihood
        mvn = self.likelihood(train_prior_dist, train_inputs)
        self.lik_train_train_covar = mvn.lazy_covariance_matrix
        self._root = root
        self._inv_root = inv_root
        self._memoize_cache = {}

    @property
    def num_train(self):
        return self.train_prior_dist.event_shape.numel()

    @property
    def mean_cache(self):
        if "mean_cache" not in self._memoize_cache:
            mvn = self.likelihood(self.train_prior_dist, self.train_inputs)
            train_mean, train_train_covar = mvn.loc, mvn.lazy_covariance_matrix
            train_labels_offset = (self.train_labels - train_mean).unsqueeze(-1)
            self._memoize_cache["mean_cache"] = torch.linalg.solve(train_train_covar, train_labels_offset).squeeze(-1)
        return self._memoize_cache["mean_cache"]

    @property
    def covar_cache(self):
        if "covar_cache" not in self._memoize_cache:
            inv_root = self._inv_root if self._inv_root is not None else root_inv_decomposition(self.lik_train_train_covar)
            self._memoize_cache["covar_cache"] = inv_root
        return self._memoize_cache["covar_cache"]

    def root(self):
        return self._root if self._root is not None else root_decomposition(self.lik_train_train_covar)

    def get_fantasy_strategy(self, inputs, targets, full_inputs, full_targets, full_output, **kwargs):
        full_mean, full_covar = full_output.mean, full_output.lazy_covariance_matrix
        num_train = self.num_train

        # Evaluate fant x train and fant x fant covariance matrices
        fant_fant_covar = full_covar[..., num_train:, num_train:]
        fant_mean = full_mean[..., num_train:]
        mvn = self.train_prior_dist.__class__(fant_mean, fant_fant_covar)
        fant_likelihood = self.likelihood.get_fantasy_likelihood(**kwargs)
        mvn_obs = fant_likelihood(mvn, inputs, **kwargs)

        fant_fant_covar = mvn_obs.covariance_matrix
        fant_train_covar = full_covar[..., num_train:, :num_train]

        self.fantasy_inputs = inputs
        self.fantasy_targets = targets

        # new mean cache (bordered system)
        K_inverse = self.covar_cache
        fant_solve = K_inverse.matmul(K_inverse.transpose(-2, -1).matmul(fant_train_covar.transpose(-2, -1)))
        schur_complement = fant_fant_covar - fant_train_covar.matmul(fant_solve)
        ftcm = fant_train_covar.matmul(self.mean_cache)
        small_system_rhs = (targets - fant_mean - ftcm).unsqueeze(-1)
        fant_cache_lower = torch.linalg.solve(schur_complement, small_system_rhs)
        fant_cache_upper = self.mean_cache.unsqueeze(-1) - fant_solve.matmul(fant_cache_lower)
        fant_mean_cache = torch.cat((fant_cache_upper.squeeze(-1), fant_cache_lower.squeeze(-1)), dim=-1)

        # new covariance cache
        L_inverse = self.covar_cache
        L = self.root()
        m, n = L.shape[-2:]

        lower_left = fant_train_covar.matmul(L_inverse)
        schur_root = torch.linalg.cholesky(fant_fant_covar - lower_left.matmul(lower_left.transpose(-2, -1)))

        # Form new root Z = [L 0; lower_left schur_root]
        num_fant = schur_root.size(-2)
        new_root = torch.zeros(m + num_fant, n + num_fant, dtype=L.dtype)
        new_root[..., :m, :n] = L
        new_root[..., m:, :n] = lower_left
        new_root[..., m:, n:] = schur_root

        # Use pseudo-inverse of Z as new inv root
        Q, R = torch.linalg.qr(new_root)
        Rdiag = torch.diagonal(R, dim1=-2, dim2=-1)
        # if R is almost singular, add jitter (Rdiag is a view, so this works)
        zeroish = Rdiag.abs() < 1e-6
        if torch.any(zeroish):
            Rdiag[zeroish] = 1e-6
        new_covar_cache = torch.linalg.solve_triangular(R, Q.transpose(-2, -1), upper=True)
        new_covar_cache = new_covar_cache.transpose(-2, -1)

        fant_strat = self.__class__(
            train_inputs=full_inputs,
            train_prior_dist=self.train_prior_dist.__class__(full_mean, full_covar),
            train_labels=full_targets,
            likelihood=fant_likelihood,
            root=new_root,
            inv_root=new_covar_cache,
        )
        fant_strat._memoize_cache = {"mean_cache": fant_mean_cache, "covar_cache": new_covar_cache}
        return fant_strat

    def exact_prediction(self, joint_mean, joint_covar):
        test_mean = joint_mean[..., self.num_train:]
        test_covar = joint_covar[..., self.num_train:, :]
        test_test_covar = test_covar[..., self.num_train:]
        test_train_covar = test_covar[..., : self.num_train]
        return (
            self.exact_predictive_mean(test_mean, test_train_covar),
            self.exact_predictive_covar(test_test_covar, test_train_covar),
        )

    def exact_predictive_mean(self, test_mean, test_train_covar):
        res = (test_train_covar @ self.mean_cache.unsqueeze(-1)).squeeze(-1)
        return res + test_mean

    def exact_predictive_covar(self, test_test_covar, test_train_covar):
        if not settings.fast_pred_var:
            correction = torch.linalg.solve(self.lik_train_train_covar, test_train_covar.transpose(-1, -2))
            return test_test_covar - test_train_covar @ correction
        precomputed_cache = self.covar_cache
        covar_inv_quad_form_root = test_train_covar.matmul(precomputed_cache)
        return test_test_covar - covar_inv_quad_form_root @ covar_inv_quad_form_root.transpose(-1, -2)


class ExactGPModel(nn.Module):
    def __init__(self, train_x, train_y, likelihood):
        super().__init__()
        self.train_inputs = (train_x,)
        self.train_targets = train_y
        self.likelihood = likelihood
        self.mean_module = ConstantMean()
        self.covar_module = RBFKernel()
        self.prediction_strategy = None

    def forward(self, x):
        return MultivariateNormal(self.mean_module(x), self.covar_module(x, x))

    def __call__(self, x):
        if self.training:
            return self.forward(x)
        train_x = self.train_inputs[0]
        if self.prediction_strategy is None:
            train_output = self.forward(train_x)
            self.prediction_strategy = DefaultPredictionStrategy(
                (train_x,), train_output, self.train_targets, self.likelihood)
        full_inputs = torch.cat([train_x, x], dim=-2)
        full_output = self.forward(full_inputs)
        predictive_mean, predictive_covar = self.prediction_strategy.exact_prediction(
            full_output.mean, full_output.covariance_matrix)
        return MultivariateNormal(predictive_mean, predictive_covar)

    def get_fantasy_model(self, inputs, targets):
        if self.prediction_strategy is None:
            self(inputs)  # populate caches
        train_x = self.train_inputs[0]
        full_inputs = torch.cat([train_x, inputs], dim=-2)
        full_targets = torch.cat([self.train_targets, targets], dim=-1)
        full_output = self.forward(full_inputs)
        new_strategy = self.prediction_strategy.get_fantasy_strategy(
            inputs, targets, (full_inputs,), full_targets, full_output)
        fantasy_model = ExactGPModel(full_inputs, full_targets, self.likelihood)
        fantasy_model.load_state_dict(self.state_dict())
        fantasy_model.prediction_strategy = new_strategy
        fantasy_model.eval()
        return fantasy_model


def objective(x):
    return torch.sin(6 * x[..., 0]) + torch.cos(4 * x[..., 1])


def fit_gp(model, likelihood, train_x, train_y, iters=20):
    model.train()
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    for _ in range(iters):
        opt.zero_grad()
        out = likelihood(model(train_x))
        cov = out.covariance_matrix
        diff = (train_y - out.mean).unsqueeze(-1)
        nll = 0.5 * (diff.transpose(-1, -2) @ torch.linalg.solve(cov, diff)).squeeze() \
            + 0.5 * torch.logdet(cov) + 0.5 * len(train_y) * math.log(2 * math.pi)
        nll.backward()
        opt.step()
    model.eval()


def integrated_variance(model, candidate, test_x):
    # fantasize at the candidate using the current posterior mean, then measure the
    # posterior variance on a reference set (negative integrated posterior variance)
    with torch.no_grad():
        fant_y = model(candidate).mean
    fantasy_model = model.get_fantasy_model(candidate, fant_y)
    posterior = fantasy_model(test_x)
    return torch.diagonal(posterior.covariance_matrix).mean()


def main():
    torch.manual_seed(0)
    train_x = torch.rand(8, 2, dtype=torch.float64)
    train_y = objective(train_x)
    likelihood = FixedNoiseGaussianLikelihood(noise=1e-14)
    model = ExactGPModel(train_x, train_y, likelihood)
    fit_gp(model, likelihood, train_x, train_y)

    test_x = torch.rand(32, 2, dtype=torch.float64)
    # initialise the candidate at the best observed point, then optimise it
    best = train_x[train_y.argmax()].clone().unsqueeze(0)
    candidate = best.clone().requires_grad_(True)
    acq_opt = torch.optim.Adam([candidate], lr=0.02)
    for step in range(5):
        acq_opt.zero_grad()
        loss = integrated_variance(model, candidate, test_x)
        loss.backward()  # expect: GG103
        acq_opt.step()
        with torch.no_grad():
            candidate.clamp_(0.0, 1.0)
    print("candidate", candidate.detach().numpy(), "loss", loss.item())


if __name__ == "__main__":
    main()
