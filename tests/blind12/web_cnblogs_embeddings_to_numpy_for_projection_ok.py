# Source: https://www.cnblogs.com/calmx/p/20016201
"""The post on turning tensors into NumPy arrays, its first way applied: the `to_numpy` helper that
hands the trained autoencoder's codes to the NumPy PCA projection (a stand-in for the user's
plotting / t-SNE step) calls `.detach().numpy()`, so the codes, which the encoder produced with grad
enabled, are cut off the graph before the conversion.
"""
import numpy as np
import torch
import torch.nn as nn


class AutoEncoder(nn.Module):
    def __init__(self, n_in, n_code):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(n_in, 16), nn.ReLU(), nn.Linear(16, n_code))
        self.decoder = nn.Sequential(nn.Linear(n_code, 16), nn.ReLU(), nn.Linear(16, n_in))

    def forward(self, x):
        return self.decoder(self.encoder(x))


def to_numpy(t):
    return t.detach().numpy()


def pca_2d(codes):
    centered = codes - codes.mean(axis=0, keepdims=True)
    _, _, vt = np.linalg.svd(centered, full_matrices=False)
    return centered @ vt[:2].T


data = torch.randn(64, 12)
model = AutoEncoder(12, 4)
opt = torch.optim.Adam(model.parameters(), lr=1e-2)
for epoch in range(5):
    opt.zero_grad()
    loss = nn.functional.mse_loss(model(data), data)
    loss.backward()
    opt.step()

codes = model.encoder(data)
points = pca_2d(to_numpy(codes))
print(points.shape)
