"""CLIP-style contrastive training that exponentiates the learnable temperature every step."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

image_enc, text_enc = nn.Linear(12, 8), nn.Linear(10, 8)
logit_scale = nn.Parameter(torch.tensor(math.log(1 / 0.07)))
opt = torch.optim.AdamW([*image_enc.parameters(), *text_enc.parameters(), logit_scale], lr=1e-3)
for step in range(3):
    zi = F.normalize(image_enc(torch.randn(4, 12)), dim=-1)
    zt = F.normalize(text_enc(torch.randn(4, 10)), dim=-1)
    logits = logit_scale.exp() * zi @ zt.t()
    labels = torch.arange(4)
    loss = (F.cross_entropy(logits, labels) + F.cross_entropy(logits.t(), labels)) / 2
    opt.zero_grad()
    loss.backward()
    opt.step()
