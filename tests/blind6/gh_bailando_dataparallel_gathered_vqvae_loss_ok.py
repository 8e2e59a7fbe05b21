# Source: https://github.com/lisiyao21/Bailando/issues/15
"""Bailando's motion VQ-VAE training under DataParallel with the reduction the reporter proposes:
the per-GPU losses gathered into a vector are averaged, `loss = loss.mean()`, before the backward.
Same scatter/gather stand-in, SepVQVAE stand-in and random dance sequences."""
import warnings

import torch
import torch.nn as nn
import torch.nn.functional as F


class DataParallel(nn.Module):
    """nn.DataParallel's scatter (chunks along dim 0) and gather (scalars unsqueezed, then cat)."""

    def __init__(self, module, n_devices=2):
        super().__init__()
        self.module = module
        self.n_devices = n_devices

    def gather(self, outputs):
        first = outputs[0]
        if isinstance(first, torch.Tensor):
            if all(t.dim() == 0 for t in outputs):
                warnings.warn('Was asked to gather along dimension 0, but all input tensors were scalars; '
                              'will instead unsqueeze and return a vector.')
                outputs = [t.view(1) for t in outputs]
            return torch.cat(outputs, dim=0)
        if isinstance(first, dict):
            return {k: self.gather([o[k] for o in outputs]) for k in first}
        return type(first)(self.gather(list(parts)) for parts in zip(*outputs))

    def forward(self, x):
        return self.gather([self.module(chunk) for chunk in x.chunk(self.n_devices)])


class VQVAE(nn.Module):
    def __init__(self, in_dim, emb_width=16, l_bins=32, commit=0.02):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv1d(in_dim, emb_width, 3, padding=1), nn.ReLU(),
                                     nn.Conv1d(emb_width, emb_width, 4, stride=2, padding=1))
        self.decoder = nn.Sequential(nn.ConvTranspose1d(emb_width, emb_width, 4, stride=2, padding=1), nn.ReLU(),
                                     nn.Conv1d(emb_width, in_dim, 3, padding=1))
        self.codebook = nn.Parameter(torch.randn(l_bins, emb_width))
        self.commit = commit

    def forward(self, x):
        x_in = x.permute(0, 2, 1)
        z = self.encoder(x_in)
        flat = z.permute(0, 2, 1).reshape(-1, z.size(1))
        idx = torch.cdist(flat, self.codebook).argmin(dim=1)
        z_q = self.codebook[idx].view(z.size(0), z.size(2), z.size(1)).permute(0, 2, 1)
        commit_loss = F.mse_loss(z, z_q.detach()) + F.mse_loss(z_q, z.detach())
        z_q = z + (z_q - z).detach()
        x_out = self.decoder(z_q).permute(0, 2, 1)
        recons_loss = F.l1_loss(x_out, x)
        return x_out, recons_loss + self.commit * commit_loss, {'recons_loss': recons_loss.detach()}


class SepVQVAE(nn.Module):
    def __init__(self, up_dim=6, down_dim=6):
        super().__init__()
        self.up_dim = up_dim
        self.vqvae_up = VQVAE(up_dim)
        self.vqvae_down = VQVAE(down_dim)

    def forward(self, x):
        x_up, x_down = x[:, :, :self.up_dim], x[:, :, self.up_dim:]
        out_up, loss_up, metrics_up = self.vqvae_up(x_up)
        out_down, loss_down, metrics_down = self.vqvae_down(x_down)
        metrics = {'recons_loss': (metrics_up['recons_loss'] + metrics_down['recons_loss']) / 2}
        return torch.cat([out_up, out_down], dim=2), (loss_up + loss_down) * 0.5, metrics


class MoQ:
    def __init__(self):
        self.model = DataParallel(SepVQVAE())

    def train(self, batches, epochs=2):
        model = self.model
        model.train()
        optimizer = torch.optim.Adam(model.parameters(), lr=3e-5)
        for epoch_i in range(1, epochs + 1):
            for batch_i, batch in enumerate(batches):
                pose_seq = batch
                optimizer.zero_grad()
                output, loss, metrics = model(pose_seq)
                loss = loss.mean()
                loss.backward()
                optimizer.step()
                print('epoch %d, batch %d, loss %s' % (epoch_i, batch_i, loss.detach().mean().item()))


agent = MoQ()
agent.train([torch.randn(4, 8, 12) for _ in range(2)])
