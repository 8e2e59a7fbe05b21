# Source: https://github.com/MrChenFeng/Adaptive-Soft-Contrastive-Learning_ICPR2022/issues/2
"""Self-supervised training with the model set to BYOL: the BYOL regression loss is
2 - 2 * cos(online prediction, target projection) per sample, and the training loop backwards it
as it is ("When using the byol model, the loss is not a scalar ... Is it necessary to sum?")."""
import copy
import torch
import torch.nn as nn
import torch.nn.functional as F


def byol_loss(p, z):
    p = F.normalize(p, dim=-1)
    z = F.normalize(z, dim=-1)
    return 2 - 2 * (p * z).sum(dim=-1)


class BYOL(nn.Module):
    def __init__(self, dim=8, m=0.99):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, dim))
        self.predictor = nn.Sequential(nn.Linear(dim, 16), nn.ReLU(), nn.Linear(16, dim))
        self.target_encoder = copy.deepcopy(self.encoder)
        for p in self.target_encoder.parameters():
            p.requires_grad = False
        self.m = m

    @torch.no_grad()
    def momentum_update(self):
        for po, pt in zip(self.encoder.parameters(), self.target_encoder.parameters()):
            pt.mul_(self.m).add_(po.detach(), alpha=1 - self.m)

    def forward(self, x1, x2):
        p1, p2 = self.predictor(self.encoder(x1)), self.predictor(self.encoder(x2))
        with torch.no_grad():
            z1, z2 = self.target_encoder(x1), self.target_encoder(x2)
        return byol_loss(p1, z2) + byol_loss(p2, z1)


model = BYOL()
optimizer = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.05)
for epoch in range(2):
    x = torch.randn(6, 16)
    x1, x2 = x + 0.1 * torch.randn_like(x), x + 0.1 * torch.randn_like(x)
    loss = model(x1, x2)
    optimizer.zero_grad()
    loss.backward()  # expect: GG105
    optimizer.step()
    model.momentum_update()
