# Source: https://github.com/cybertronai/autograd-hacks/issues/8
"""Per-example gradients with autograd-hacks' recipe (add hooks, run the model, backward, compute
grad1), where the model outputs a vector and only one of its components is wanted: the backward runs on
that component summed over the batch, a scalar whose per-example parts stay apart in grad1."""
import torch
import torch.nn as nn

activations = {}


def add_hooks(model):
    def save_activations(layer, inputs, output):
        activations[layer] = inputs[0].detach()
    for layer in model.modules():
        if isinstance(layer, nn.Linear):
            layer.register_forward_hook(save_activations)


def compute_grad1(model):
    """grad1[n] = per-example weight gradient, from the saved activations and backprops."""
    for layer in model.modules():
        if isinstance(layer, nn.Linear) and hasattr(layer, "backprops"):
            layer.weight.grad1 = torch.einsum("ni,nj->nij", layer.backprops, activations[layer])


model = nn.Sequential(nn.Linear(5, 8), nn.Tanh(), nn.Linear(8, 3))
add_hooks(model)
for layer in model.modules():
    if isinstance(layer, nn.Linear):
        layer.register_full_backward_hook(lambda l, gi, go: setattr(l, "backprops", go[0].detach()))

data = torch.randn(4, 5)
output = model(data)
output[:, 0].sum().backward()
compute_grad1(model)
print(model[2].weight.grad1.shape)
