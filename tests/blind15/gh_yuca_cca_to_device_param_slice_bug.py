# Source: https://github.com/riveSunder/yuca/issues/82
"""yuca's continuous cellular automaton: CCA built from a ca_config whose genesis/persistence
functions are GaussianMixtures of `Gaussian` modules with trainable `nn.Parameter` mu/sigma;
`CCA.to_device` (which "overloads `to` to ensure all parameters get moved") then copies every
parameter onto itself with `param[:] = param.to(my_device)`, a slice of a leaf that requires grad
(0-d parameters are first reshaped to a view): torch raises "a view of a leaf Variable that
requires grad is being used in an in-place operation", the issue's error when instantiating CCA
with a ca_config. The thread names the cause (requires_grad vs to_device) but shows no patch.
The config is built inline instead of loaded from conway_life.npy; kernels/utils are stand-ins.
"""
import copy

import numpy as np
import torch
import torch.nn as nn


def query_kwargs(key, default, **kwargs):  # yuca.utils stand-in
    return kwargs[key] if key in kwargs.keys() else default


# ---- yuca/activations.py ----
class Gaussian(nn.Module):
    def __init__(self, **kwargs):
        super(Gaussian, self).__init__()
        mu = query_kwargs("mu", 0.0, **kwargs)
        sigma = query_kwargs("sigma", 0.1, **kwargs)
        if type(mu) is not torch.Tensor:
            mu = torch.tensor(mu)
        if type(sigma) is not torch.Tensor:
            sigma = torch.tensor(sigma)
        self.mu = nn.Parameter(mu)
        self.sigma = nn.Parameter(sigma)
        self.register_parameter("mu", self.mu)
        self.register_parameter("sigma", self.sigma)
        self.mode = query_kwargs("mode", 0, **kwargs)

    def forward(self, x):
        eps = 1e-9
        if self.mode:
            return torch.exp(- ((x - self.mu) / (eps + self.sigma))**2 / 2) * 2 - 1
        return torch.exp(- ((x - self.mu) / (eps + self.sigma))**2 / 2)


class GaussianMixture(nn.Module):
    def __init__(self, **kwargs):
        super(GaussianMixture, self).__init__()
        self.mode = query_kwargs("mode", 0, **kwargs)
        parameters = query_kwargs("parameters", [0.5, 0.15], **kwargs)
        parameters = torch.tensor(parameters).to(torch.get_default_dtype())
        self.amplitudes = torch.tensor([])
        self.gaussians = []
        for param_index in range(0, len(parameters), 2):
            self.amplitudes = torch.cat([self.amplitudes, torch.tensor([1.0])])
            self.gaussians.append(Gaussian(mu=parameters[param_index],
                                           sigma=parameters[param_index + 1], mode=0))
            for name, param in self.gaussians[-1].named_parameters():
                self.register_parameter(f"{name}_{param_index}", param)

    def forward(self, x):
        result = self.amplitudes[0] * self.gaussians[0](x)
        for amplitude, gaussian in zip(self.amplitudes[1:], self.gaussians[1:]):
            result = result + amplitude * gaussian(x)
        if self.mode:
            return torch.clamp(result * 2 - 1, -1., 1.)
        return torch.clamp(result, 0.0, 1.0)


# ---- yuca/kernels.py stand-in ----
def get_kernel(config):
    radius = config.get("radius", 1)
    kernel = torch.ones(2 * radius + 1, 2 * radius + 1)
    kernel[radius, radius] = 0.0
    return kernel / kernel.sum()


# ---- yuca/multiverse.py CA stand-in ----
class CA(nn.Module):
    def __init__(self):
        super(CA, self).__init__()


# ---- yuca/cca.py ----
class CCA(CA):
    def __init__(self, **kwargs):
        super(CCA, self).__init__()
        self.kernel_radius = query_kwargs("kernel_radius", 13, **kwargs)
        self.my_device = query_kwargs("device", "cpu", **kwargs)
        self.conv_mode = query_kwargs("conv_mode", "circular", **kwargs)
        self.ca_mode = query_kwargs("ca_mode", "functional", **kwargs)
        self.internal_channels = query_kwargs("internal_channels", 1, **kwargs)
        self.external_channels = query_kwargs("external_channels", 1, **kwargs)
        self.use_grad = query_kwargs("use_grad", False, **kwargs)
        self.genesis_fns = []
        self.persistence_fns = []
        if "ca_config" in kwargs.keys():
            if kwargs["ca_config"] is not None:
                self.load_config(kwargs["ca_config"])
        self.reset()

    def reset(self):
        self.t_count = 0.0

    def load_config(self, config):
        self.genesis_fns = []
        self.persistence_fns = []
        self.config = config
        self.add_identity_kernel()
        self.initialize_id_layer()
        nbhd_kernel = get_kernel(config["neighborhood_kernel_config"])
        self.neighborhood_kernel_config = config["neighborhood_kernel_config"]
        self.add_neighborhood_kernel(nbhd_kernel)
        self.initialize_neighborhood_layer()
        self.add_genesis_fn(config["genesis_config"])
        self.add_persistence_fn(config["persistence_config"])
        self.dt = config["dt"] if "dt" in config.keys() else 0.1
        self.initialize_weight_layer()
        self.include_parameters()

    def add_identity_kernel(self, **kwargs):
        self.id_kernel = torch.tensor([[[[0, 0.0, 0], [0, 1.0, 0], [0, 0.0, 0]]]])
        self.id_dim = self.id_kernel.shape[-1]

    def initialize_id_layer(self):
        padding = (self.id_dim - 1) // 2
        self.id_layer = nn.Conv2d(self.external_channels, self.internal_channels, self.id_dim,
                                  padding=padding, padding_mode=self.conv_mode, bias=False)
        for param in self.id_layer.named_parameters():
            param[1].requires_grad = False
            param[1][:] = self.id_kernel

    def add_neighborhood_kernel(self, kernel):
        kernel = kernel.clone().detach().requires_grad_(False)
        if len(kernel.shape) == 2:
            kernel = torch.reshape(kernel, (1, 1, kernel.shape[0], kernel.shape[1]))
        self.neighborhood_kernels = kernel
        self.neighborhood_dim = kernel.shape[-1]

    def initialize_neighborhood_layer(self):
        padding = (self.neighborhood_dim - 1) // 2
        self.neighborhood_layer = nn.Conv2d(self.external_channels, self.internal_channels,
                                            self.neighborhood_dim, padding=padding,
                                            groups=self.external_channels,
                                            padding_mode=self.conv_mode, bias=False)
        for param in self.neighborhood_layer.named_parameters():
            param[1].requires_grad = False
            param[1][:] = self.neighborhood_kernels

    def initialize_weight_layer(self):
        weights = torch.ones(self.external_channels, self.internal_channels, 1, 1)
        self.weights = weights / weights.sum()
        self.weights_layer = nn.Conv2d(self.internal_channels, self.external_channels, 1,
                                       padding=0, padding_mode=self.conv_mode, bias=False)
        for param in self.weights_layer.named_parameters():
            param[1].requires_grad = False
            param[1][:] = self.weights
            param[1].requires_grad = self.use_grad

    def add_genesis_fn(self, config):
        if config["name"] == "GaussianMixture":
            self.genesis_fns.append(GaussianMixture(**config))
        elif config["name"] == "Gaussian":
            self.genesis_fns.append(Gaussian(**config))

    def add_persistence_fn(self, config):
        if config["name"] == "GaussianMixture":
            self.persistence_fns.append(GaussianMixture(**config))
        elif config["name"] == "Gaussian":
            self.persistence_fns.append(Gaussian(**config))

    def include_parameters(self):
        for ii, genesis_fn in enumerate(self.genesis_fns):
            for jj, param in enumerate(genesis_fn.parameters()):
                self.register_parameter(f"gen_fn_{ii}_{jj}", param)
        for kk, persistence_fn in enumerate(self.persistence_fns):
            for ll, param in enumerate(persistence_fn.parameters()):
                self.register_parameter(f"per_fn_{kk}_{ll}", param)

    def genesis(self, neighborhoods):
        return torch.cat([fn(neighborhoods[:, ii:ii + 1]) for ii, fn in enumerate(self.genesis_fns)], dim=1)

    def persistence(self, neighborhoods):
        return torch.cat([fn(neighborhoods[:, ii:ii + 1]) for ii, fn in enumerate(self.persistence_fns)], dim=1)

    def update_universe(self, identity, neighborhoods):
        generate = (1.0 - identity) * self.genesis(neighborhoods)
        persist = identity * self.persistence(neighborhoods)
        return self.weights_layer(generate + persist)

    def forward(self, universe, mode=0):
        identity = self.id_layer(universe)
        neighborhoods = self.neighborhood_layer(universe)
        update = self.update_universe(identity, neighborhoods)
        new_universe = torch.clamp(universe + self.dt * update, 0, 1.0)
        self.t_count += self.dt
        return new_universe

    def to_device(self, my_device):
        """
        overloads the `to` function from nn.Module
        to ensure all parameters get moved
        """
        self.to(my_device)
        self.my_device = my_device
        self.id_layer.to(my_device)
        self.neighborhood_layer.to(my_device)
        self.weights_layer.to(my_device)
        for name, param in self.named_parameters():
            if len(param.shape) == 0:
                param = param.reshape(1)
            param[:] = param.to(my_device)  # expect: GG108
        for ii, genesis_fn in enumerate(self.genesis_fns):
            genesis_fn.to(my_device)
        for kk, persistence_fn in enumerate(self.persistence_fns):
            persistence_fn.to(my_device)


def conway_life_config():
    return {
        "neighborhood_kernel_config": {"name": "MooreLike", "radius": 1},
        "genesis_config": {"name": "GaussianMixture", "parameters": [0.375, 0.02], "mode": 1},
        "persistence_config": {"name": "GaussianMixture", "parameters": [0.25, 0.05, 0.375, 0.05], "mode": 1},
        "dt": 1.0,
    }


if __name__ == "__main__":
    ca = CCA(ca_config=copy.deepcopy(conway_life_config()))
    ca.to_device("cpu")
    universe = (torch.rand(1, 1, 16, 16) > 0.7).float()
    with torch.no_grad():
        for step in range(4):
            universe = ca(universe)
    print("live cells:", universe.sum().item(), "t =", ca.t_count)
