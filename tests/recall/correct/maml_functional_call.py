"""MAML with torch.func.functional_call and a dict of fast weights; the tasks' query losses are
averaged into one meta-loss, backwarded once."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call

model = nn.Sequential(nn.Linear(1, 16), nn.ReLU(), nn.Linear(16, 1))
meta_opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for meta_iter in range(2):
    meta_loss = 0.0
    for task in range(3):
        amp = float(torch.rand(1)) + 0.5
        xs, xq = torch.randn(5, 1), torch.randn(5, 1)
        params = dict(model.named_parameters())
        for _ in range(2):
            loss = F.mse_loss(functional_call(model, params, (xs,)), amp * torch.sin(xs))
            grads = torch.autograd.grad(loss, list(params.values()), create_graph=True)
            params = {n: p - 0.01 * g for (n, p), g in zip(params.items(), grads)}
        meta_loss = meta_loss + F.mse_loss(functional_call(model, params, (xq,)), amp * torch.sin(xq))
    meta_opt.zero_grad()
    (meta_loss / 3).backward()
    meta_opt.step()
