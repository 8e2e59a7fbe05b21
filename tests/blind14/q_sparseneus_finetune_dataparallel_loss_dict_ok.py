# Source: https://github.com/xxlong0/SparseNeuS/issues/42
"""Fixed twin of q_sparseneus_finetune_dataparallel_loss_dict_bug.py. SparseNeuS fine-tuning on
several GPUs: `torch.nn.DataParallel` gathered the 0-d 'loss_lod0' of each `FinetuneTrainer`
replica into a vector, and `loss.backward()` raised "grad can be implicitly created only for
scalar outputs". The thread has no answer; the right fix, applied here, averages the gathered
replica losses (`losses['loss_lod0'].mean()`, equal-sized chunks) before the backward. The SDF and
rendering networks, the dataset and DataParallel are small CPU stand-ins written in the file.
"""
from types import SimpleNamespace

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

# ----------------------------- stand-ins: DataParallel, dataset, tqdm -----------------------------


def _gather(outputs):
    first = outputs[0]
    if isinstance(first, dict):
        return {k: _gather([o[k] for o in outputs]) for k in first}
    if torch.is_tensor(first):
        if first.dim() == 0:  # "all input tensors were scalars; will instead unsqueeze and return a vector"
            return torch.stack(outputs)
        return torch.cat(outputs, 0)
    return first


class DataParallel(nn.Module):
    def __init__(self, module, num_devices=2):
        super().__init__()
        self.module, self.num_devices = module, num_devices

    def forward(self, batch, **kwargs):
        n = self.num_devices
        chunks = [{k: v.chunk(n)[i] for k, v in batch.items()} for i in range(n)]
        return _gather([self.module(chunk, **kwargs) for chunk in chunks])


def tqdm(it):
    return it


def make_dataloader(batch_size, n_batches=2, n_rays=16):
    return [{'rays_o': torch.randn(batch_size, n_rays, 3), 'rays_d': F.normalize(torch.randn(batch_size, n_rays, 3), dim=-1),
             'rays_color': torch.rand(batch_size, n_rays, 3), 'rays_mask': torch.ones(batch_size, n_rays, 1)}
            for _ in range(n_batches)]

# ----------------------------- models (stand-ins) -----------------------------


class SparseSdfNetwork(nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(3, d), nn.Softplus(beta=100), nn.Linear(d, 1 + d))

    def forward(self, pts):
        out = self.net(pts)
        return out[..., :1], out[..., 1:]


class RenderingNetwork(nn.Module):
    def __init__(self, d=16):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(3 + d, d), nn.ReLU(), nn.Linear(d, 3), nn.Sigmoid())

    def forward(self, pts, feat):
        return self.net(torch.cat([pts, feat], -1))


class SingleVarianceNetwork(nn.Module):
    def __init__(self, init_val=0.3):
        super().__init__()
        self.variance = nn.Parameter(torch.tensor(init_val))

    def forward(self, x):
        return torch.ones_like(x) * torch.exp(self.variance * 10.0)


class FinetuneTrainer(nn.Module):
    def __init__(self, sdf_network_finetune, rendering_network, variance_network, n_samples=8):
        super().__init__()
        self.sdf_network_finetune = sdf_network_finetune
        self.rendering_network = rendering_network
        self.variance_network = variance_network
        self.n_samples = n_samples

    def get_trainable_params(self):
        return {'params': list(self.sdf_network_finetune.parameters()),
                'faster_params': list(self.rendering_network.parameters()),
                'slower_params': list(self.variance_network.parameters())}

    def forward(self, batch, background_rgb=None, iter_step=0, mode='train'):
        rays_o, rays_d = batch['rays_o'], batch['rays_d']
        z = torch.linspace(0.5, 2.0, self.n_samples)
        pts = rays_o[..., None, :] + rays_d[..., None, :] * z[:, None]
        sdf, feat = self.sdf_network_finetune(pts)
        inv_s = self.variance_network(sdf)
        alpha = torch.sigmoid(-sdf * inv_s).squeeze(-1)
        weights = alpha * torch.cumprod(torch.cat([torch.ones_like(alpha[..., :1]), 1 - alpha[..., :-1] + 1e-7], -1), -1)
        color = (weights[..., None] * self.rendering_network(pts, feat)).sum(-2)
        color_mlp_loss = F.l1_loss(color * batch['rays_mask'], batch['rays_color'] * batch['rays_mask'])
        sparse_loss = torch.exp(-sdf.abs() * 100).mean()
        loss = color_mlp_loss + 0.02 * sparse_loss
        psnr = -10.0 * torch.log10(F.mse_loss(color.detach(), batch['rays_color']))
        losses_lod0 = {'color_mlp_loss': color_mlp_loss.detach(), 'sparse_loss': sparse_loss.detach(),
                       'depth_loss': torch.zeros(()), 'psnr': psnr}
        return {'loss_lod0': loss, 'losses_lod0': losses_lod0}

# ----------------------------- exp_runner_finetune.py -----------------------------


class Runner:
    def __init__(self, conf, num_devices):
        self.conf = conf
        self.num_devices = num_devices
        self.batch_size = self.num_devices
        self.end_iter = conf['train.end_iter']
        self.report_freq = conf['train.report_freq']
        self.learning_rate = conf['train.learning_rate']
        self.iter_step = 0
        self.trainer = FinetuneTrainer(SparseSdfNetwork(), RenderingNetwork(), SingleVarianceNetwork())
        self.train_dataloader = make_dataloader(self.batch_size)
        self.optimizer_setup()
        self.trainer = DataParallel(self.trainer, self.num_devices)

    def optimizer_setup(self):
        params_to_train = self.trainer.get_trainable_params()
        params = params_to_train['params']
        faster_params = params_to_train['faster_params']
        slower_params = params_to_train['slower_params']

        self.params_to_train = params + faster_params + slower_params
        self.optimizer = torch.optim.Adam([
            {'params': slower_params, 'lr': self.learning_rate / 2.},
            {'params': params, 'lr': self.learning_rate / 2.},
            {'params': faster_params}
        ], lr=self.learning_rate)

    def train(self):
        res_step = self.end_iter - self.iter_step
        dataloader = self.train_dataloader
        epochs = int(1 + res_step // len(dataloader))
        background_rgb = None

        for epoch_i in range(epochs):
            dataloader = tqdm(dataloader)
            for batch in dataloader:
                batch['batch_idx'] = torch.tensor([x for x in range(self.batch_size)])  # used to get meta

                losses = self.trainer(
                    batch,
                    background_rgb=background_rgb,
                    iter_step=self.iter_step,
                    mode='train',
                )

                loss = losses['loss_lod0'].mean()  # one 0-d loss per GPU replica, gathered
                losses_lod0 = losses['losses_lod0']

                self.optimizer.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(self.params_to_train, 1.0)
                self.optimizer.step()

                self.iter_step += 1
                if self.iter_step % self.report_freq == 0:
                    print('iter:{:8>d} loss = {:.4f} color_loss_lod0 = {:.4f} psnr = {:.2f}'.format(
                        self.iter_step, loss.mean().item(), losses_lod0['color_mlp_loss'].mean().item(),
                        losses_lod0['psnr'].mean().item()))


torch.manual_seed(0)
np.random.seed(0)
conf = {'train.end_iter': 4, 'train.report_freq': 1, 'train.learning_rate': 2e-4}
runner = Runner(conf, num_devices=2)  # torch.cuda.device_count() on the reporter's machine
runner.train()
