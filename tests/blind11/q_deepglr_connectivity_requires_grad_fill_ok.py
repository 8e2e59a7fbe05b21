# Source: https://github.com/huyvd7/pytorch-deepglr/issues/4
"""Fixed twin of q_deepglr_connectivity_requires_grad_fill_bug.py: supporting_matrix() finishes
filling the constant adjacency matrix (the symmetric entries) before `A.requires_grad_(True)`; the
edge index list is still taken before that fill, as in the original. The thread has no answer; this
is the right fix (the matrix is a constant, no in-place write is made on a leaf that requires grad).
"""
import argparse
import numpy as np
import torch
import torch.nn as nn

dtype = torch.FloatTensor


class _Dense:
    def __init__(self, a):
        self.a = a

    def toarray(self):
        return self.a


def connected_adjacency(image, connect="8"):
    r, c = image.shape[:2]
    A = np.zeros((r * c, r * c))
    steps = [(0, 1), (1, 0)] if connect == "4" else [(0, 1), (1, -1), (1, 0), (1, 1)]
    for i in range(r):
        for j in range(c):
            for di, dj in steps:
                if 0 <= i + di < r and 0 <= j + dj < c:
                    A[image[i, j], image[i + di, j + dj]] = 1
    return _Dense(A + A.T)


def qpsolve(L, u, y, Im):
    return torch.linalg.solve(Im + u * L, y)


def supporting_matrix(opt):
    dtype = opt.dtype
    width = opt.width

    pixel_indices = [i for i in range(width * width)]
    pixel_indices = np.reshape(pixel_indices, (width, width))
    A = connected_adjacency(pixel_indices, connect=opt.connectivity)
    A_pair = np.asarray(np.where(A.toarray() == 1)).T

    opt.edges = A_pair.shape[0]
    H_dim0 = opt.edges
    H_dim1 = width ** 2

    I = torch.eye(width ** 2, width ** 2).type(dtype)
    A = torch.zeros(width ** 2, width ** 2).type(dtype)
    H = torch.zeros(H_dim0, H_dim1).type(dtype)
    for e, p in enumerate(A_pair):
        H[e, p[0]] = 1
        H[e, p[1]] = -1
        A[p[0], p[1]] = 1

    opt.I = I
    opt.pairs = A_pair
    opt.H = H
    opt.connectivity_idx = torch.where(A > 0)

    for e, p in enumerate(A_pair):
        A[p[1], p[0]] = 1
    opt.connectivity_full = A.requires_grad_(True)


def small_cnn(out_channels):
    return nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, out_channels, 3, padding=1))


class cnnu(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                                 nn.Linear(4, 1))

    def forward(self, x):
        return self.net(x)


class GLR(nn.Module):
    def __init__(self, width=4, cuda=False, opt=None):
        super(GLR, self).__init__()
        self.cnnf = small_cnn(3)
        self.cnny = small_cnn(3)
        self.cnnu = cnnu()
        self.wt = width
        self.identity_matrix = torch.eye(self.wt ** 2, self.wt ** 2).type(dtype)
        self.opt = opt
        self.dtype = torch.FloatTensor
        self.support_L = torch.ones(self.opt.width ** 2, 1).type(self.dtype)
        supporting_matrix(self.opt)
        self.base_W = torch.zeros(self.opt.batch_size, self.opt.channels, self.opt.width ** 2,
                                  self.opt.width ** 2).type(self.dtype)

    def forward(self, xf):
        E = self.cnnf.forward(xf)
        Y = self.cnny.forward(xf).squeeze(0)
        u = self.cnnu.forward(xf)
        u = torch.clamp(u, 0.001, 15.5625)
        u = u.unsqueeze(1).unsqueeze(1)
        img_dim = self.wt
        Fs = self.opt.H.matmul(E.view(E.shape[0], E.shape[1], self.opt.width ** 2, 1)) ** 2
        W = self.base_W.clone()
        w = torch.exp(-(Fs.sum(axis=1)) / (2 * (1 ** 2)))
        w = w.unsqueeze(1).repeat(1, self.opt.channels, 1, 1)
        W[:, :, self.opt.connectivity_idx[0], self.opt.connectivity_idx[1]] = w.view(xf.shape[0], 3, -1)
        W[:, :, self.opt.connectivity_idx[1], self.opt.connectivity_idx[0]] = w.view(xf.shape[0], 3, -1)
        L1 = W @ self.support_L
        L = torch.diag_embed(L1.squeeze(-1)) - W
        out = qpsolve(L=L, u=u, y=Y.view(Y.shape[0], self.opt.channels, -1, 1), Im=self.identity_matrix)
        return out.view(xf.shape[0], 3, img_dim, img_dim)


opt = argparse.Namespace(dtype=dtype, cuda=False, width=4, connectivity="8", batch_size=2, channels=3)
glr = GLR(width=opt.width, opt=opt)
optimizer = torch.optim.Adam(glr.parameters(), lr=2e-4)
criterion = nn.MSELoss()
for epoch in range(2):
    noisy, ref = torch.rand(opt.batch_size, 3, 4, 4), torch.rand(opt.batch_size, 3, 4, 4)
    optimizer.zero_grad()
    loss = criterion(glr(noisy), ref)
    loss.backward()
    optimizer.step()
