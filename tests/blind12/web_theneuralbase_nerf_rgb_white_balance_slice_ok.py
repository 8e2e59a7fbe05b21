# Source: https://theneuralbase.com/pytorch/learn/beginner/in-place-operations-underscore-suffix/
"""The lesson on in-place operations (trailing underscore), its team note's advice applied: the tiny
NeRF-style MLP's white balance `.clone()`s the sigmoid colours before scaling channels in place
through slices, so the output sigmoid saved for its backward is left unchanged.
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
        rgb = rgb.clone()
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
    loss.backward()
    opt.step()
    print(it, loss.item())
