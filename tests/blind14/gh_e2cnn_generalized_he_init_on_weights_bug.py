# Source: https://github.com/QUVA-Lab/e2cnn/issues/34
"""metalearning-symmetries' generate_synthetic_data.py (--problem 2d_rot8) builds an e2cnn R2Conv
with rotation-equivariant filters and randomizes it with
`gnn.init.generalized_he_init(conv.weights, conv.basisexpansion)` before convolving random inputs to
make the synthetic tasks; the init writes `tensor[:] = vars * torch.randn_like(tensor)` into the
Parameter itself: "a view of a leaf Variable that requires grad is being used in an in-place
operation" (torch >= 1.5; torch 1.1 let it pass). The maintainer's fix is to pass `conv.weights.data`.
e2cnn's R2Conv, its basis expansion and the init function are small stand-ins written here after
the library's code (a fixed random basis instead of the harmonic one).
"""
import math
from collections import defaultdict

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class BlocksBasisExpansion(nn.Module):
    """Stand-in for e2cnn's basis expansion: each weight scales one fixed basis filter."""
    def __init__(self, in_size, out_size, kernel_size, n_irreps=4):
        super().__init__()
        self.in_size, self.out_size = in_size, out_size
        self.n_irreps = n_irreps
        g = torch.Generator().manual_seed(0)
        self.dim = in_size * out_size * 3
        self.register_buffer("basis", torch.randn(self.dim, out_size, in_size, kernel_size, kernel_size, generator=g))

    def dimension(self):
        return self.dim

    def get_basis_info(self):
        for k in range(self.dim):
            yield {"id": k,
                   "in_irreps_position": (k // 3) % self.in_size,
                   "out_irreps_position": (k // 3) // self.in_size,
                   "in_irrep": "irrep_%d" % (k % self.n_irreps),
                   "out_irrep": "irrep_%d" % ((k + 1) % self.n_irreps)}

    def forward(self, weights):
        return torch.einsum("k,koiyx->oiyx", weights, self.basis)


class R2Conv(nn.Module):
    """Stand-in for e2cnn.nn.R2Conv: filters expanded from `self.weights` in the steerable basis."""
    def __init__(self, in_size, out_size, kernel_size, padding=0):
        super().__init__()
        self.basisexpansion = BlocksBasisExpansion(in_size, out_size, kernel_size)
        self.weights = nn.Parameter(torch.zeros(self.basisexpansion.dimension()), requires_grad=True)
        self.bias = nn.Parameter(torch.zeros(out_size), requires_grad=True)
        self.padding = padding

    def forward(self, x):
        filter = self.basisexpansion(self.weights)
        return F.conv2d(x, filter, self.bias, padding=self.padding)


class init:
    @staticmethod
    def generalized_he_init(tensor, basisexpansion):
        """e2cnn.nn.init.generalized_he_init: He initialization in a steerable basis."""
        vars = torch.ones_like(tensor)
        inputs_count = defaultdict(lambda: set())
        basis_count = defaultdict(int)
        basis_info = list(basisexpansion.get_basis_info())
        for attr in basis_info:
            i, o = attr["in_irreps_position"], attr["out_irreps_position"]
            in_irrep, out_irrep = attr["in_irrep"], attr["out_irrep"]
            inputs_count[o].add(in_irrep)
            basis_count[in_irrep, o] += 1
        for o in inputs_count.keys():
            inputs_count[o] = len(inputs_count[o])
        for w, attr in enumerate(basis_info):
            i, o = attr["in_irreps_position"], attr["out_irreps_position"]
            in_irrep, out_irrep = attr["in_irrep"], attr["out_irrep"]
            vars[w] = 1. / math.sqrt(inputs_count[o] * basis_count[in_irrep, o])
        tensor[:] = vars * torch.randn_like(tensor)  # expect: GG108


class gnn:
    R2Conv = R2Conv
    init = init


def generate_2d_rot8(out_path=None, num_tasks=3, num_examples=4, img_size=12):
    xs, ys = [], []
    for task in range(num_tasks):
        conv = gnn.R2Conv(1, 1, kernel_size=5, padding=2)
        gnn.init.generalized_he_init(conv.weights, conv.basisexpansion)
        inputs = torch.randn(num_examples, 1, img_size, img_size)
        with torch.no_grad():
            outputs = conv(inputs)
        xs.append(inputs.numpy())
        ys.append(outputs.numpy())
    return np.stack(xs), np.stack(ys)


if __name__ == "__main__":
    problem = "2d_rot8"
    if problem == "2d_rot8":
        xs, ys = generate_2d_rot8()
        print(xs.shape, ys.shape)
