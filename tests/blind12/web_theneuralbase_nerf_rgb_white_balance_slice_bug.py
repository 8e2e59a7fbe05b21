# Source: https://theneuralbase.com/pytorch/learn/beginner/in-place-operations-underscore-suffix/
"""The lesson on in-place operations (trailing underscore): its team note warns that in-place ops on
intermediate tensors reached by slicing or indexing (e.g. `x[0].add_()`) share storage with the
graph's tensors and break the backward, and says to `.clone()` first. Here a tiny NeRF-style MLP's
colour head applies a per-channel white balance with `rgb[..., c].mul_(gain)` on views of the
sigmoid output; sigmoid saved that output, so the rendering loss's backward raises "one of the
variables needed for gradient computation has been modified by an inplace operation". Fix from the
note: `.clone()` the tensor before the in-place writes.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class TinyNeRF(nn.Module):
    def __init__(self, hidden=32):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(3, hidden), nn.ReLU(), nn.Linear(hidden, 4))
        self.gains = (1.1, 1.0, 0.9)

    def white_balance(self, rgb):
        for c, gain in enumerate(self.gains):
            rgb[..., c].mul_(gain)
        return rgb

    def forward(self, pts):
        raw = self.mlp(pts)
        rgb = self.white_balance(torch.sigmoid(raw[..., :3]))
        sigma = F.softplus(raw[..., 3])
        return rgb, sigma


def render(model, rays_o, rays_d, n_samples=8):
    t = torch.linspace(0.1, 1.0, n_samples)
    pts = rays_o[:, None, :] + rays_d[:, None, :] * t[None, :, None]
    rgb, sigma = model(pts)
    alpha = 1.0 - torch.exp(-sigma * (1.0 / n_samples))
    trans = torch.cumprod(torch.cat([torch.ones_like(alpha[:, :1]), 1.0 - alpha[:, :-1] + 1e-10], 1), 1)
    weights = alpha * trans
    return (weights[..., None] * rgb).sum(1)


model = TinyNeRF()
opt = torch.optim.Adam(model.parameters(), lr=5e-3)
rays_o, rays_d = torch.randn(16, 3), F.normalize(torch.randn(16, 3), dim=-1)
target = torch.rand(16, 3)
for it in range(3):
    loss = F.mse_loss(render(model, rays_o, rays_d), target)
    opt.zero_grad()
    loss.backward()  # expect: GG103
    opt.step()
    print(it, loss.item())
