"""MAML with fast weights in a dict rebuilt for every task from dict(model.named_parameters())."""
import torch
import torch.nn as nn
import torch.nn.functional as F

model = nn.Linear(1, 1)
meta = torch.optim.Adam(model.parameters(), lr=1e-3)
for it in range(2):
    meta.zero_grad()
    for task in range(2):
        x, y = torch.randn(5, 1), torch.randn(5, 1)
        params = dict(model.named_parameters())
        loss = F.mse_loss(F.linear(x, params["weight"], params["bias"]), y)
        grads = torch.autograd.grad(loss, list(params.values()), create_graph=True)
        fast = {n: p - 0.1 * g for (n, p), g in zip(params.items(), grads)}
        qloss = F.mse_loss(F.linear(x, fast["weight"], fast["bias"]), y)
        qloss.backward()
    meta.step()
