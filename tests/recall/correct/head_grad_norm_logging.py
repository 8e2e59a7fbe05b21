"""Multi-task training in which the auxiliary head learns by hand-written SGD from
torch.autograd.grad over its own parameters only (so the encoder gets no auxiliary gradient),
and the main loss is then backwarded through the shared encoder."""
import torch
import torch.nn as nn
import torch.nn.functional as F

encoder = nn.Sequential(nn.Linear(6, 16), nn.ReLU())
head_a, head_b = nn.Linear(16, 3), nn.Linear(16, 1)
opt = torch.optim.Adam([*encoder.parameters(), *head_a.parameters()], lr=1e-3)
for step in range(3):
    x, y, t = torch.randn(8, 6), torch.randint(0, 3, (8,)), torch.randn(8, 1)
    h = encoder(x)
    loss_a = F.cross_entropy(head_a(h), y)
    loss_b = F.mse_loss(head_b(h), t)
    grads = torch.autograd.grad(loss_b, list(head_b.parameters()))
    with torch.no_grad():
        for p, g in zip(head_b.parameters(), grads):
            p -= 0.01 * g
    opt.zero_grad()
    loss_a.backward()
    opt.step()
