"""Per-sample gradient norms with torch.func (grad + vmap) for clipping statistics, then a step."""
import torch
import torch.nn as nn
from torch.func import functional_call, grad, vmap

model = nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.05)


def sample_loss(params, x, y):
    return ((functional_call(model, params, (x.unsqueeze(0),)) - y) ** 2).mean()


for step in range(2):
    x, y = torch.randn(6, 4), torch.randn(6, 1)
    params = {k: v.detach() for k, v in model.named_parameters()}
    per_sample = vmap(grad(sample_loss), in_dims=(None, 0, 0))(params, x, y)
    norms = torch.sqrt(sum(g.flatten(1).pow(2).sum(1) for g in per_sample.values()))
    loss = ((model(x) - y) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
