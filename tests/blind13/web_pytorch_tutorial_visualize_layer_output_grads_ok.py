# Source: https://fanyv88.com:443/https/docs-preview.pytorch.org/pytorch/tutorials/3389/advanced/visualizing_gradients_tutorial.html
"""The tutorial's per-layer gradient plot with its fix: the deep MLP calls `retain_grad()` on each
layer output it keeps, so after `loss.backward()` their `.grad` holds the gradient the helper
averages.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class DeepMLP(nn.Module):
    def __init__(self, width, depth):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(width, width) for _ in range(depth)])
        self.outputs = []

    def forward(self, x):
        self.outputs = []
        for layer in self.layers:
            x = torch.sigmoid(layer(x))
            x.retain_grad()
            self.outputs.append(x)
        return x


def layer_grad_magnitudes(model):
    mags = []
    for out in model.outputs:
        mags.append(out.grad.abs().mean().item())
    return mags


model = DeepMLP(8, 6)
x = torch.randn(16, 8)
y = torch.rand(16, 8)
loss = F.mse_loss(model(x), y)
loss.backward()
for i, m in enumerate(layer_grad_magnitudes(model)):
    print("layer", i, "mean |grad|", m)
