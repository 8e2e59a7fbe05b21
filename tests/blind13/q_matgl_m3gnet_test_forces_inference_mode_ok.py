# Source: https://github.com/materialyzeai/matgl/issues/163
"""Fixed twin of q_matgl_m3gnet_test_forces_inference_mode_bug.py. matgl's M3GNet potential example
with `trainer.test(...)` after `trainer.fit`: `Potential.forward` takes the forces as `autograd.grad`
of the energies with respect to the positions, which needs a graph; under the Trainer's default
`inference_mode=True` the test step builds none and the grad raised "element 0 of tensors does not
require grad and does not have a grad_fn". Fix (the maintainer's, added to matgl's example and unit
test): `Trainer(..., inference_mode=False)`, so the test runs under `no_grad`, which the
`torch.set_grad_enabled(True)` in `PotentialLightningModule.step` overrides. Lightning's Trainer, DGL
graphs, M3GNet and torchmetrics are small stand-ins written in the file; the structures are random.
"""
from __future__ import annotations

import contextlib

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.autograd import grad

# ----------------------------- stand-ins: dgl graph, M3GNet, pytorch_lightning -----------------------------


class Graph:
    """Minimal batched DGL-like graph: node and edge data dicts, src/dst edge lists."""

    def __init__(self, pos, src, dst, n_nodes, n_edges):
        self.ndata = {"pos": pos}
        self.edata = {}
        self.src, self.dst = src, dst
        self._n_nodes, self._n_edges = n_nodes, n_edges
        self.batch_size = len(n_nodes)
        self.node_graph = torch.repeat_interleave(torch.arange(len(n_nodes)), torch.tensor(n_nodes))

    def batch_num_nodes(self):
        return torch.tensor(self._n_nodes)

    def batch_num_edges(self):
        return torch.tensor(self._n_edges)


class M3GNet(nn.Module):
    """Tiny stand-in: bond vectors from positions, radial MLP, node sums read out per structure."""

    def __init__(self, element_types=("Mo", "S"), units=16):
        super().__init__()
        self.element_types = element_types
        self.bond_mlp = nn.Sequential(nn.Linear(1, units), nn.SiLU(), nn.Linear(units, units), nn.SiLU())
        self.readout = nn.Linear(units, 1)

    def forward(self, g, state_attr=None, l_g=None):
        pos = g.ndata["pos"]
        bond_vec = pos[g.dst] - pos[g.src]
        g.edata["bond_vec"] = bond_vec
        bond_dist = torch.linalg.norm(bond_vec, dim=1, keepdim=True)
        edge_feat = self.bond_mlp(bond_dist)
        node_feat = torch.zeros(pos.shape[0], edge_feat.shape[1]).index_add(0, g.dst, edge_feat)
        site_e = self.readout(node_feat).squeeze(-1)
        return torch.zeros(g.batch_size).index_add(0, g.node_graph, site_e)


class LightningModule(nn.Module):
    def log(self, name, value, **kwargs):
        self.logged[name] = float(value)

    def save_hyperparameters(self):
        self.logged = {}


class Trainer:
    """Stand-in for pytorch_lightning.Trainer: fit (train + validation under no_grad) and test, which
    runs under torch.inference_mode() unless inference_mode=False (Lightning >= 1.8 default: True)."""

    def __init__(self, max_epochs=1, accelerator="cpu", inference_mode=True):
        self.max_epochs, self.inference_mode = max_epochs, inference_mode

    def fit(self, model, train_dataloaders, val_dataloaders):
        optimizer = model.configure_optimizers()
        for epoch in range(self.max_epochs):
            model.train()
            for batch_idx, batch in enumerate(train_dataloaders):
                loss = model.training_step(batch, batch_idx)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            model.eval()
            with torch.no_grad():
                for batch_idx, batch in enumerate(val_dataloaders):
                    model.validation_step(batch, batch_idx)

    def test(self, model, dataloaders):
        model.eval()
        ctx = torch.inference_mode() if self.inference_mode else torch.no_grad()
        with ctx:
            for batch_idx, batch in enumerate(dataloaders):
                model.test_step(batch, batch_idx)
        return [dict(model.logged)]

# ----------------------------- matgl/apps/pes.py -----------------------------


class Potential(nn.Module):
    """A class representing an interatomic potential."""

    def __init__(self, model, data_mean=0.0, data_std=1.0, element_refs=None, calc_forces=True,
                 calc_stresses=True, calc_hessian=False, calc_site_wise=False):
        super().__init__()
        self.model = model
        self.calc_forces = calc_forces
        self.calc_stresses = calc_stresses
        self.calc_hessian = calc_hessian
        self.calc_site_wise = calc_site_wise
        self.element_refs = None
        data_mean = data_mean or 0
        data_std = data_std or 1
        self.data_mean = data_mean.clone().detach() if isinstance(data_mean, torch.Tensor) else torch.tensor(data_mean)
        self.data_std = data_std.clone().detach() if isinstance(data_std, torch.Tensor) else torch.tensor(data_std)

    def forward(self, g, state_attr=None, l_g=None):
        if self.calc_forces:
            g.ndata["pos"].requires_grad_(True)

        predictions = self.model(g, state_attr, l_g)
        total_energies = predictions
        total_energies = self.data_std * total_energies + self.data_mean

        forces = torch.zeros(1)
        stresses = torch.zeros(1)
        hessian = torch.zeros(1)

        if self.calc_forces:
            grads = grad(total_energies, [g.ndata["pos"], g.edata["bond_vec"]], grad_outputs=torch.ones_like(total_energies), create_graph=True, retain_graph=True)
            forces = -grads[0]

        return total_energies, forces, stresses, hessian

# ----------------------------- matgl/utils/training.py -----------------------------


class MatglLightningModuleMixin:
    def training_step(self, batch, batch_idx):
        results, batch_size = self.step(batch)
        self.log_dict({f"train_{key}": val for key, val in results.items()}, batch_size=batch_size)
        return results["Total_Loss"]

    def validation_step(self, batch, batch_idx):
        results, batch_size = self.step(batch)
        self.log_dict({f"val_{key}": val for key, val in results.items()}, batch_size=batch_size)
        return results["Total_Loss"]

    def test_step(self, batch, batch_idx):
        results, batch_size = self.step(batch)
        self.log_dict({f"test_{key}": val for key, val in results.items()}, batch_size=batch_size)
        return results

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.lr, eps=1e-8)

    def log_dict(self, d, batch_size=None):
        for k, v in d.items():
            self.log(k, v)


class PotentialLightningModule(MatglLightningModuleMixin, LightningModule):
    def __init__(self, model, element_refs=None, energy_weight=1.0, force_weight=1.0, stress_weight=0.0,
                 data_mean=0.0, data_std=1.0, loss="mse_loss", lr=0.001):
        super().__init__()
        self.register_buffer("data_mean", torch.tensor(data_mean))
        self.register_buffer("data_std", torch.tensor(data_std))
        self.energy_weight = energy_weight
        self.force_weight = force_weight
        self.stress_weight = stress_weight
        self.lr = lr
        self.model = Potential(model=model, element_refs=element_refs, calc_stresses=stress_weight != 0,
                               data_std=self.data_std, data_mean=self.data_mean)
        self.loss = F.mse_loss if loss == "mse_loss" else F.l1_loss
        self.save_hyperparameters()

    def forward(self, g, l_g=None, state_attr=None):
        e, f, s, h = self.model(g=g, l_g=l_g, state_attr=state_attr)
        return e, f.float(), s, h

    def step(self, batch):
        torch.set_grad_enabled(True)
        g, l_g, state_attr, energies, forces, stresses = batch
        e, f, s, _ = self(g=g, state_attr=state_attr, l_g=l_g)
        preds = (e, f, s)
        labels = (energies, forces, stresses)

        num_atoms = g.batch_num_nodes()
        results = self.loss_fn(loss=self.loss, preds=preds, labels=labels, num_atoms=num_atoms)
        batch_size = preds[0].numel()
        return results, batch_size

    def loss_fn(self, loss, labels, preds, num_atoms=None):
        e_loss = loss(labels[0] / num_atoms, preds[0] / num_atoms)
        f_loss = loss(labels[1], preds[1])
        e_mae = (labels[0] / num_atoms - preds[0] / num_atoms).abs().mean()
        f_mae = (labels[1] - preds[1]).abs().mean()
        total_loss = self.energy_weight * e_loss + self.force_weight * f_loss
        return {"Total_Loss": total_loss, "Energy_MAE": e_mae, "Force_MAE": f_mae}

# ----------------------------- training_m3gnet_potential example -----------------------------


def make_batch(n_structs=2, n_atoms=3):
    pos, src, dst, n_nodes, n_edges = [], [], [], [], []
    offset = 0
    for _ in range(n_structs):
        pos.append(torch.rand(n_atoms, 3) * 3.0)
        for i in range(n_atoms):
            for j in range(n_atoms):
                if i != j:
                    src.append(offset + i)
                    dst.append(offset + j)
        n_nodes.append(n_atoms)
        n_edges.append(n_atoms * (n_atoms - 1))
        offset += n_atoms
    g = Graph(torch.cat(pos), torch.tensor(src), torch.tensor(dst), n_nodes, n_edges)
    energies = torch.randn(n_structs)
    forces = torch.randn(offset, 3)
    stresses = torch.zeros(n_structs, 3, 3)
    return g, None, torch.zeros(n_structs, 2), energies, forces, stresses


torch.manual_seed(0)
np.random.seed(0)
train_loader = [make_batch() for _ in range(2)]
val_loader = [make_batch()]
test_loader = [make_batch()]

model = M3GNet(element_types=("Mo", "S"))
lit_module = PotentialLightningModule(model=model)

trainer = Trainer(max_epochs=1, accelerator="cpu", inference_mode=False)

trainer.fit(model=lit_module, train_dataloaders=train_loader, val_dataloaders=val_loader)
print(trainer.test(model=lit_module, dataloaders=test_loader))
