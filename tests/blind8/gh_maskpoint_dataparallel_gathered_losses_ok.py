# Source: https://github.com/WisconsinAIVision/MaskPoint/issues/7
"""MaskPoint's pre-training loop under DataParallel with the gathered per-GPU losses averaged
before the backward (`_loss = loss_1.mean() + loss_2.mean()`), as a DataParallel training loop
must; the thread gives no fix (the reporter's `_loss.backward(torch.ones_like(_loss))` sums the
replicas' losses instead and led him to another error)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def gather(outputs):
    first = outputs[0]
    if isinstance(first, tuple):
        return tuple(gather([o[i] for o in outputs]) for i in range(len(first)))
    if first.dim() == 0:
        return torch.stack(outputs)  # "all input tensors were scalars; will instead unsqueeze"
    return torch.cat(outputs, dim=0)


class DataParallel(nn.Module):
    """Runs the module on one chunk of the batch per device and gathers the outputs on dim 0."""

    def __init__(self, module, device_ids=(0, 1)):
        super().__init__()
        self.module = module
        self.device_ids = list(device_ids)

    def forward(self, points):
        return gather([self.module(part) for part in points.chunk(len(self.device_ids))])


class MaskPointModel(nn.Module):
    def __init__(self, trans_dim=32, mask_ratio=0.75, num_queries=16):
        super().__init__()
        self.mask_ratio, self.num_queries = mask_ratio, num_queries
        self.encoder = nn.Sequential(nn.Linear(3, trans_dim), nn.ReLU(), nn.Linear(trans_dim, trans_dim))
        self.decoder = nn.Sequential(nn.Linear(trans_dim + 3, trans_dim), nn.ReLU(), nn.Linear(trans_dim, 1))
        self.proj = nn.Linear(trans_dim, trans_dim)

    def forward(self, pts, noaug=False):
        B, N, _ = pts.shape
        keep = int(N * (1 - self.mask_ratio))
        perm = torch.randperm(N)
        visible, masked = pts[:, perm[:keep]], pts[:, perm[keep:]]
        feat = self.encoder(visible).max(dim=1).values  # global feature of the visible points
        if noaug:
            return feat
        real_q = masked[:, :self.num_queries]
        fake_q = torch.rand_like(real_q) * 2 - 1
        queries = torch.cat([real_q, fake_q], dim=1)
        labels = torch.cat([torch.ones(B, self.num_queries), torch.zeros(B, self.num_queries)], dim=1)
        logits = self.decoder(torch.cat([feat[:, None].expand(-1, queries.size(1), -1), queries], -1)).squeeze(-1)
        loss_1 = F.binary_cross_entropy_with_logits(logits, labels)
        feat_all = self.encoder(pts).max(dim=1).values
        loss_2 = 1 - F.cosine_similarity(self.proj(feat), feat_all.detach(), dim=-1).mean()
        return loss_1, loss_2


class Config:
    max_epoch = 1
    step_per_update = 1
    grad_norm_clip = 10
    npoints = 64


def run_net(config):
    base_model = MaskPointModel()
    print('Using Data parallel ...')
    base_model = DataParallel(base_model)
    optimizer = torch.optim.AdamW(base_model.parameters(), lr=1e-3, weight_decay=0.05)

    base_model.zero_grad()
    for epoch in range(0, config.max_epoch + 1):
        base_model.train()
        num_iter = 0
        for idx in range(2):
            num_iter += 1
            points = torch.rand(4, config.npoints, 3) * 2 - 1
            assert points.size(1) == config.npoints

            loss_1, loss_2 = base_model(points)

            _loss = loss_1.mean() + loss_2.mean()

            _loss.backward()

            if num_iter == config.step_per_update:
                torch.nn.utils.clip_grad_norm_(base_model.parameters(), config.grad_norm_clip, norm_type=2)
                num_iter = 0
                optimizer.step()
                base_model.zero_grad()
            print(epoch, idx, loss_1.mean().item(), loss_2.mean().item())


run_net(Config())
