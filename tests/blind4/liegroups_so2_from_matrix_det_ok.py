# Source: https://github.com/utiasSTARS/liegroups/issues/4
"""The registration loss with liegroups' fix from the thread: is_valid_matrix detaches the batch
before handing it to NumPy, `np.linalg.det(mat.detach().cpu().numpy())`, so validating the
network's rotation no longer touches the graph, and the loss on the SO2 angle backwards through
the prediction."""
import math

import numpy as np
import torch
import torch.nn as nn


class SO2:
    dim = 2

    def __init__(self, mat):
        self.mat = mat

    @classmethod
    def is_valid_matrix(cls, mat):
        if mat.dim() < 3:
            mat = mat.unsqueeze(dim=0)
        # Check the shape
        shape_check = mat.shape[1:3] == (cls.dim, cls.dim)
        # Determinants of each matrix in the batch should be 1
        det = torch.from_numpy(np.linalg.det(mat.detach().cpu().numpy()))
        det_check = torch.allclose(det, torch.ones_like(det), atol=1e-4)
        # The transpose of each matrix in the batch should be its inverse
        eye = torch.eye(cls.dim, dtype=mat.dtype).expand_as(mat)
        inv_check = torch.allclose(mat.transpose(2, 1).bmm(mat), eye, atol=1e-4)
        return shape_check and det_check and inv_check

    @classmethod
    def from_matrix(cls, mat, normalize=False):
        mat_is_valid = cls.is_valid_matrix(mat)
        if mat_is_valid or normalize:
            return cls(mat)
        raise ValueError("Invalid rotation matrix. Use normalize=True to handle rounding errors.")

    def log(self):
        mat = self.mat if self.mat.dim() == 3 else self.mat.unsqueeze(0)
        return torch.atan2(mat[:, 1, 0], mat[:, 0, 0])


class DCPHead(nn.Module):
    def __init__(self, emb_dims=16):
        super().__init__()
        self.emb = nn.Sequential(nn.Linear(2, emb_dims), nn.ReLU(), nn.Linear(emb_dims, emb_dims))

    def forward(self, src, tgt):
        src_emb, tgt_emb = self.emb(src), self.emb(tgt)
        scores = torch.softmax(src_emb @ tgt_emb.transpose(2, 1) / math.sqrt(src_emb.size(-1)), dim=2)
        src_corr = scores @ tgt
        src_c = src - src.mean(dim=1, keepdim=True)
        corr_c = src_corr - src_corr.mean(dim=1, keepdim=True)
        H = src_c.transpose(2, 1) @ corr_c
        U, S, Vh = torch.linalg.svd(H)
        V = Vh.transpose(2, 1)
        d = torch.det(V @ U.transpose(2, 1))
        D = torch.diag_embed(torch.stack([torch.ones_like(d), d], dim=1))
        return V @ D @ U.transpose(2, 1)


def rotation(theta):
    c, s = torch.cos(theta), torch.sin(theta)
    return torch.stack([torch.stack([c, -s], -1), torch.stack([s, c], -1)], -2)


net = DCPHead()
opt = torch.optim.Adam(net.parameters(), lr=1e-3)
for it in range(3):
    theta_ab = (torch.rand(4) - 0.5) * math.pi / 2
    src = torch.randn(4, 10, 2)
    tgt = src @ rotation(theta_ab).transpose(2, 1)
    rotation_ab_pred = net(src, tgt)
    print('rotation_ab_pred size = {} type = {}'.format(rotation_ab_pred.size(), rotation_ab_pred.type()))
    rvec_ab_pred = SO2.from_matrix(rotation_ab_pred)
    loss = ((rvec_ab_pred.log() - theta_ab) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(it, loss.item())
