# Source: https://github.com/pyro-ppl/pyro/commit/2b076266cdbac5250bca2e9c609a64dc261ea654
"""Pyro ``BlockNAFFlow`` (block neural autoregressive flow), before commit 2b07626 "Fixed in-place
operation bug".

A Block-NAF flow over a standard normal is fitted to a banana-shaped target density by reverse KL:
sample ``y = naf_dist.rsample()``, score ``naf_dist.log_prob(y) - target_log_prob(y)``, step Adam.
With ``residual='normal'`` the flow's ``_call`` ends with::

    y = self.f(pre_activation)     # torch.tanh: its backward needs its own output
    ...
    if self.residual == 'normal':
        y += x

The in-place residual add overwrites the tanh output that ``TanhBackward`` saved, so
``loss.backward()`` raises "one of the variables needed for gradient computation has been modified
by an inplace operation".

This is the fixed version. Fix (the commit): ``y = y + x``.

(Stand-in notes: ``TransformModule`` is pyro's ``Transform`` + ``nn.Module`` mix-in; the domain is
written ``constraints.independent(constraints.real, 1)`` and the diagonal mask indexes with
``.bool()`` as current torch/pyro require.)
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Independent, Normal, TransformedDistribution, constraints

torch.manual_seed(0)

eps = 1e-8


# ---- pyro/distributions/torch_transform.py ---------------------------------------------------

class TransformModule(torch.distributions.Transform, torch.nn.Module):
    """Transforms with learnable parameters such as normalizing flows should inherit from this class."""

    def __init__(self, *args, **kwargs):
        super(TransformModule, self).__init__(*args, **kwargs)

    def __hash__(self):
        return super(torch.nn.Module, self).__hash__()


# ---- pyro/distributions/block_naf.py ---------------------------------------------------------

def log_matrix_product(A, B):
    """
    Computes the matrix products of two matrices in log-space, returning the result in log-space.
    """
    return torch.logsumexp(A.unsqueeze(-1) + B.unsqueeze(-3), dim=-2)


class BlockNAFFlow(TransformModule):
    domain = constraints.independent(constraints.real, 1)
    codomain = constraints.independent(constraints.real, 1)
    bijective = True
    autoregressive = True

    def __init__(self, input_dim, hidden_factors=[8, 8], residual=None):
        super(BlockNAFFlow, self).__init__(cache_size=1)

        if any([h < 1 for h in hidden_factors]):
            raise ValueError('Hidden factors, {}, must all be >= 1'.format(hidden_factors))

        if residual not in [None, 'normal', 'gated']:
            raise ValueError('Invalid value {} for keyword argument "residual"'.format(residual))

        # Initialize modules for each layer in flow
        self.residual = residual
        self.input_dim = input_dim
        self.layers = nn.ModuleList([MaskedBlockLinear(input_dim, input_dim * hidden_factors[0], input_dim)])
        for idx in range(1, len(hidden_factors)):
            self.layers.append(MaskedBlockLinear(
                input_dim * hidden_factors[idx - 1], input_dim * hidden_factors[idx], input_dim))
        self.layers.append(MaskedBlockLinear(input_dim * hidden_factors[-1], input_dim, input_dim))
        self._cached_logDetJ = None

        if residual == 'gated':
            self.gate = torch.nn.Parameter(torch.nn.init.normal_(torch.Tensor(1)))

    def f(self, x):
        """
        The nonlinearity to apply after each masked block linear layer
        """
        return torch.tanh(x)

    def log_df_dx(self, x):
        return - 2. * (x - math.log(2.) + F.softplus(- 2. * x))

    def _call(self, x):
        y = x
        for idx in range(len(self.layers)):
            pre_activation, dy_dx = self.layers[idx](y.unsqueeze(-1))
            J_act = self.log_df_dx(pre_activation).view(*(list(x.size()) + [-1, 1]))

            if idx == 0:
                logDetJ = dy_dx + J_act
            else:
                logDetJ = log_matrix_product(dy_dx, logDetJ) + J_act

            y = self.f(pre_activation)

        self._cached_logDetJ = logDetJ.squeeze(-1).squeeze(-1)

        if self.residual == 'normal':
            y = y + x
            self._cached_logDetJ = F.softplus(self._cached_logDetJ)
        elif self.residual == 'gated':
            y = self.gate.sigmoid() * x + (1. - self.gate.sigmoid()) * y
            term1 = torch.log(self.gate.sigmoid() + eps)
            log1p_gate = torch.log1p(eps - self.gate.sigmoid())
            log_gate = torch.log(self.gate.sigmoid() + eps)
            term2 = F.softplus(log1p_gate - log_gate + self._cached_logDetJ)
            self._cached_logDetJ = term1 + term2

        return y

    def _inverse(self, y):
        raise KeyError("BlockNAFFlow expected to find key in intermediates cache but didn't")

    def log_abs_det_jacobian(self, x, y):
        """
        Calculates the elementwise determinant of the log jacobian
        """
        return self._cached_logDetJ.sum(-1)


class MaskedBlockLinear(torch.nn.Module):
    """
    Module that implements a linear layer with block matrices with positive diagonal blocks.
    Moreover, it uses Weight Normalization (https://arxiv.org/abs/1602.07868) for stability.
    """

    def __init__(self, in_features, out_features, dim, bias=True):
        super(MaskedBlockLinear, self).__init__()
        self.in_features, self.out_features, self.dim = in_features, out_features, dim

        weight = torch.zeros(out_features, in_features)

        # Fill in non-zero entries of block weight matrix, going from top
        # to bottom.
        for i in range(dim):
            weight[i * out_features // dim:(i + 1) * out_features // dim,
                   0:(i + 1) * in_features // dim] = torch.nn.init.xavier_uniform_(
                torch.Tensor(out_features // dim, (i + 1) * in_features // dim))

        self._weight = torch.nn.Parameter(weight)
        self._diag_weight = torch.nn.Parameter(torch.nn.init.uniform_(torch.Tensor(out_features, 1)).log())

        self.bias = torch.nn.Parameter(
            torch.nn.init.uniform_(torch.Tensor(out_features),
                                   -1 / math.sqrt(out_features),
                                   1 / math.sqrt(out_features))) if bias else 0

        # Diagonal block mask
        mask_d = torch.eye(dim).unsqueeze(-1).repeat(1, out_features // dim,
                                                     in_features // dim).view(out_features, in_features)
        self.register_buffer('mask_d', mask_d)

        # Off-diagonal block mask for lower triangular weight matrix
        mask_o = torch.tril(torch.ones(dim, dim), diagonal=-1).unsqueeze(-1)
        mask_o = mask_o.repeat(1, out_features // dim, in_features // dim).view(out_features, in_features)
        self.register_buffer('mask_o', mask_o)

    def get_weights(self):
        # Form block weight matrix, making sure it's positive on diagonal!
        w = torch.exp(self._weight) * self.mask_d + self._weight * self.mask_o

        # Sum is taken over columns, i.e. one norm per row
        w_squared_norm = (w ** 2).sum(-1, keepdim=True)

        # Effect of multiplication and division is that each row is normalized and rescaled
        w = self._diag_weight.exp() * w / (w_squared_norm.sqrt() + eps)

        wpl = self._diag_weight + self._weight - 0.5 * torch.log(w_squared_norm + eps)

        return w, wpl[self.mask_d.bool()].view(self.dim, self.out_features // self.dim, self.in_features // self.dim)

    def forward(self, x):
        w, wpl = self.get_weights()
        return (torch.matmul(w, x) + self.bias.unsqueeze(-1)).squeeze(-1), wpl


# ---- the user's script: fit a 2-d banana density by reverse KL -------------------------------

def target_log_prob(z):
    z1, z2 = z[..., 0], z[..., 1]
    return -0.5 * (z1 ** 2 / 4.0) - 0.5 * (z2 - 0.5 * z1 ** 2) ** 2


base_dist = Independent(Normal(torch.zeros(2), torch.ones(2)), 1)
naf = BlockNAFFlow(input_dim=2, hidden_factors=[4, 4], residual='normal')
naf_dist = TransformedDistribution(base_dist, [naf])
optimizer = torch.optim.Adam(naf.parameters(), lr=1e-3)

for step in range(3):
    y = naf_dist.rsample(torch.Size([32]))
    loss = (naf_dist.log_prob(y) - target_log_prob(y)).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print('step {} loss {:.4f}'.format(step, loss.item()))
