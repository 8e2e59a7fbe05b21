"""CLIP-style contrastive training where the learnable temperature is exponentiated once, before the
loop, and the resulting logit scale is reused by every step."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

image_enc = nn.Linear(12, 8)
text_enc = nn.Linear(10, 8)
logit_scale = nn.Parameter(torch.tensor(math.log(1 / 0.07)))
params = [*image_enc.parameters(), *text_enc.parameters(), logit_scale]
opt = torch.optim.AdamW(params, lr=1e-3)
scale = logit_scale.exp()

for step in range(3):
    imgs, txts = torch.randn(4, 12), torch.randn(4, 10)
    zi = F.normalize(image_enc(imgs), dim=-1)
    zt = F.normalize(text_enc(txts), dim=-1)
    logits = scale * zi @ zt.t()
    labels = torch.arange(4)
    loss = (F.cross_entropy(logits, labels) + F.cross_entropy(logits.t(), labels)) / 2
    opt.zero_grad()
    loss.backward()  # expect: GG101
    opt.step()
