# Source: https://github.com/bayesiains/nflows/issues/89
"""The user trains a flow of nflows' PiecewiseRationalQuadraticCouplingTransform layers whose
transform net (theirs, not shown in the report; the error names a [256, 71] output of ReLU, so the
stand-in here ends in a ReLU) has `hidden_features`. `_piecewise_cdf` then scales the spline
parameters in place (`unnormalized_widths /= np.sqrt(...)`), slices of the net's output that ReLU
saved for its backward, so `loss.backward()` raises "one of the variables needed for gradient
computation has been modified by an inplace operation: ... output 0 of ReluBackward0". Fix (the
reporter's, in the thread): divide out of place. nflows' classes are trimmed stand-ins written in the
file (the rational-quadratic spline is replaced by a small monotone map of the same parameters).
"""
import warnings

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class StandardNormal(nn.Module):
    def __init__(self, shape):
        super().__init__()
        self._shape = torch.Size(shape)

    def log_prob(self, inputs):
        return -0.5 * (inputs ** 2).sum(-1) - 0.5 * self._shape.numel() * np.log(2 * np.pi)


class CompositeTransform(nn.Module):
    def __init__(self, transforms):
        super().__init__()
        self._transforms = nn.ModuleList(transforms)

    def forward(self, inputs, context=None):
        total_logabsdet = inputs.new_zeros(inputs.shape[0])
        for transform in self._transforms:
            inputs, logabsdet = transform(inputs, context)
            total_logabsdet = total_logabsdet + logabsdet
        return inputs, total_logabsdet


class Flow(nn.Module):
    def __init__(self, transform, distribution):
        super().__init__()
        self._transform = transform
        self._distribution = distribution

    def log_prob(self, inputs, context=None):
        noise, logabsdet = self._transform(inputs, context=context)
        return self._distribution.log_prob(noise) + logabsdet


def unconstrained_rational_quadratic_spline(inputs, unnormalized_widths, unnormalized_heights,
                                            unnormalized_derivatives, inverse=False, tails="linear",
                                            tail_bound=1.0, min_bin_width=1e-3, min_bin_height=1e-3,
                                            min_derivative=1e-3):
    widths = F.softmax(unnormalized_widths, dim=-1)
    heights = F.softmax(unnormalized_heights, dim=-1)
    derivatives = min_derivative + F.softplus(unnormalized_derivatives)
    slope = 1.0 + (widths * heights).sum(-1) + derivatives.mean(-1)
    outputs = inputs * slope
    return outputs, torch.log(slope)


class PiecewiseRationalQuadraticCouplingTransform(nn.Module):
    def __init__(self, mask, transform_net_create_fn, num_bins=10, tails=None, tail_bound=1.0,
                 min_bin_width=1e-3, min_bin_height=1e-3, min_derivative=1e-3):
        super().__init__()
        self.num_bins, self.tails, self.tail_bound = num_bins, tails, tail_bound
        self.min_bin_width, self.min_bin_height, self.min_derivative = min_bin_width, min_bin_height, min_derivative
        mask = torch.as_tensor(mask)
        features_vector = torch.arange(len(mask))
        self.register_buffer("identity_features", features_vector.masked_select(mask <= 0))
        self.register_buffer("transform_features", features_vector.masked_select(mask > 0))
        self.transform_net = transform_net_create_fn(
            len(self.identity_features), len(self.transform_features) * self._transform_dim_multiplier())

    def _transform_dim_multiplier(self):
        if self.tails == "linear":
            return self.num_bins * 3 - 1
        else:
            return self.num_bins * 3 + 1

    def forward(self, inputs, context=None):
        identity_split = inputs[:, self.identity_features, ...]
        transform_split = inputs[:, self.transform_features, ...]

        transform_params = self.transform_net(identity_split, context)
        transform_split, logabsdet = self._coupling_transform(transform_split, transform_params)

        outputs = torch.empty_like(inputs)
        outputs[:, self.identity_features, ...] = identity_split
        outputs[:, self.transform_features, ...] = transform_split
        return outputs, logabsdet

    def _coupling_transform(self, inputs, transform_params, inverse=False):
        b, d = inputs.shape
        # For 2D data, reshape transform_params from Bx(D*?) to BxDx?
        transform_params = transform_params.reshape(b, d, -1)
        outputs, logabsdet = self._piecewise_cdf(inputs, transform_params, inverse)
        return outputs, logabsdet.sum(-1)

    def _piecewise_cdf(self, inputs, transform_params, inverse=False):
        unnormalized_widths = transform_params[..., : self.num_bins]
        unnormalized_heights = transform_params[..., self.num_bins: 2 * self.num_bins]
        unnormalized_derivatives = transform_params[..., 2 * self.num_bins:]

        if hasattr(self.transform_net, "hidden_features"):
            unnormalized_widths /= np.sqrt(self.transform_net.hidden_features)
            unnormalized_heights /= np.sqrt(self.transform_net.hidden_features)
        elif hasattr(self.transform_net, "hidden_channels"):
            unnormalized_widths /= np.sqrt(self.transform_net.hidden_channels)
            unnormalized_heights /= np.sqrt(self.transform_net.hidden_channels)
        else:
            warnings.warn("Inputs to the softmax are not scaled down: initialization might be bad.")

        return unconstrained_rational_quadratic_spline(
            inputs=inputs,
            unnormalized_widths=unnormalized_widths,
            unnormalized_heights=unnormalized_heights,
            unnormalized_derivatives=unnormalized_derivatives,
            inverse=inverse,
            tails=self.tails,
            tail_bound=self.tail_bound,
            min_bin_width=self.min_bin_width,
            min_bin_height=self.min_bin_height,
            min_derivative=self.min_derivative,
        )


class TransformNet(nn.Module):
    """The user's conditioner: an MLP whose output goes through the activation too."""

    def __init__(self, in_features, out_features, hidden_features=32):
        super().__init__()
        self.hidden_features = hidden_features
        self.layers = nn.Sequential(
            nn.Linear(in_features, hidden_features), nn.ReLU(),
            nn.Linear(hidden_features, hidden_features), nn.ReLU(),
            nn.Linear(hidden_features, out_features), nn.ReLU(),
        )

    def forward(self, inputs, context=None):
        return self.layers(inputs)


def create_net(in_features, out_features):
    return TransformNet(in_features, out_features, hidden_features=32)


num_layers = 2
transforms = []
for i in range(num_layers):
    mask = [1, 0] if i % 2 == 0 else [0, 1]
    transforms.append(PiecewiseRationalQuadraticCouplingTransform(
        mask=mask, transform_net_create_fn=create_net, num_bins=24, tails="linear", tail_bound=3.0))
flow = Flow(CompositeTransform(transforms), StandardNormal(shape=[2]))
optimizer = torch.optim.Adam(flow.parameters(), lr=1e-3)

data = torch.randn(256, 2) * torch.tensor([1.0, 0.5])
for step in range(3):
    batch = data[torch.randperm(256)[:64]]
    optimizer.zero_grad()
    loss = -flow.log_prob(inputs=batch).mean()
    loss.backward()  # expect: GG103
    optimizer.step()
    print(step, loss.item())
