# Source: https://github.com/openmm/openmm-torch/issues/119
"""The user wants an openmm-torch TorchForce that biases backbone dihedrals: the module converts
the atom positions into (phi, psi) angles and feeds them to a network. TorchForce takes whatever
`forward(positions)` returns as the potential energy and calls `backward()` on it to get the
forces, so during `simulation.minimizeEnergy()` torch raises "grad can be implicitly created only
for scalar outputs": the module returns one energy per residue. (The thread shows no model code;
this module, one network output per (phi, psi) pair, is a reconstruction of the report's
description.) Fix: return one scalar energy, the sum over residues. OpenMM's Simulation, minimizer
and openmm-torch's reference kernel (forward, backward, forces = -grad) are small stand-ins
written in the file.
"""
import numpy as np
import torch
import torch.nn as nn


class TorchForce:
    """Stand-in for openmmtorch.TorchForce: the module's output is the energy."""

    def __init__(self, module):
        self.module = module

    def calcForcesAndEnergy(self, positions):
        pos = torch.tensor(positions, dtype=torch.float32, requires_grad=True)
        energy = self.module(pos)
        energy.backward()  # expect: GG105
        return energy.detach(), -pos.grad


class Context:
    def __init__(self, forces, positions):
        self.forces, self.positions = forces, np.array(positions, dtype=np.float64)

    def getEnergyAndForces(self):
        total, forces = 0.0, np.zeros_like(self.positions)
        for force in self.forces:
            e, f = force.calcForcesAndEnergy(self.positions)
            total += float(e)
            forces += f.numpy()
        return total, forces


class LocalEnergyMinimizer:
    @staticmethod
    def minimize(context, tolerance=10.0, maxIterations=20, step=1e-3):
        for _ in range(maxIterations):
            energy, forces = context.getEnergyAndForces()
            if np.abs(forces).max() < tolerance:
                break
            context.positions = context.positions + step * forces
        return energy


class Simulation:
    def __init__(self, forces, positions):
        self.context = Context(forces, positions)

    def minimizeEnergy(self, tolerance=10.0, maxIterations=20):
        return LocalEnergyMinimizer.minimize(self.context, tolerance, maxIterations)


class DihedralBias(nn.Module):
    def __init__(self, phi_indices, psi_indices, hidden=16):
        super().__init__()
        self.register_buffer("phi_indices", torch.tensor(phi_indices, dtype=torch.long))
        self.register_buffer("psi_indices", torch.tensor(psi_indices, dtype=torch.long))
        self.net = nn.Sequential(nn.Linear(4, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh(),
                                 nn.Linear(hidden, 1))

    @staticmethod
    def dihedral(positions, indices):
        p0, p1, p2, p3 = (positions[indices[:, k]] for k in range(4))
        b0, b1, b2 = p0 - p1, p2 - p1, p3 - p2
        b1 = b1 / b1.norm(dim=-1, keepdim=True)
        v = b0 - (b0 * b1).sum(-1, keepdim=True) * b1
        w = b2 - (b2 * b1).sum(-1, keepdim=True) * b1
        x = (v * w).sum(-1)
        y = (torch.cross(b1, v, dim=-1) * w).sum(-1)
        return torch.atan2(y, x)

    def forward(self, positions):
        phi = self.dihedral(positions, self.phi_indices)
        psi = self.dihedral(positions, self.psi_indices)
        features = torch.stack([torch.cos(phi), torch.sin(phi), torch.cos(psi), torch.sin(psi)], dim=-1)
        return self.net(features).squeeze(-1)


# a short peptide backbone: N, CA, C for 4 residues
n_res = 4
rng = np.random.default_rng(0)
positions = np.cumsum(rng.normal(scale=0.15, size=(3 * n_res, 3)), axis=0)
phi_indices = [[3 * i - 1, 3 * i, 3 * i + 1, 3 * i + 2] for i in range(1, n_res)]
psi_indices = [[3 * i, 3 * i + 1, 3 * i + 2, 3 * i + 3] for i in range(0, n_res - 1)]

torch.manual_seed(0)
module = DihedralBias(phi_indices, psi_indices)
torch_force = TorchForce(module)
simulation = Simulation([torch_force], positions)
print(simulation.minimizeEnergy())
