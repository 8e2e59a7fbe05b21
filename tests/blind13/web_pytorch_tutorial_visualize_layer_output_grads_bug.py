# Source: https://fanyv88.com:443/https/docs-preview.pytorch.org/pytorch/tutorials/3389/advanced/visualizing_gradients_tutorial.html
"""PyTorch's "Visualizing Gradients" tutorial: after the forward pass of an affine layer, ReLU and
MSE loss, reading `.grad` of the non-leaf pre-activation or activation gives None with the warning
"The .grad attribute of a Tensor that is not a leaf Tensor is being accessed"; it then plots the
mean gradient magnitude of each layer of a deeper network. Here the deep MLP keeps each layer's
output in a list and the plotting helper reads `out.grad.abs().mean()`: torch warns and the None
raises an AttributeError. Fix from the tutorial: `retain_grad()` on the intermediate outputs.
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
            self.outputs.append(x)
        return x


def layer_grad_magnitudes(model):
    mags = []
    for out in model.outputs:
        mags.append(out.grad.abs().mean().item())  # expect: GG106
    return mags


model = DeepMLP(8, 6)
x = torch.randn(16, 8)
y = torch.rand(16, 8)
loss = F.mse_loss(model(x), y)
loss.backward()
for i, m in enumerate(layer_grad_magnitudes(model)):
    print("layer", i, "mean |grad|", m)
