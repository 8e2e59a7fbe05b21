"""Extended vocabulary whose embedding table is concatenated inside every step."""
import torch
import torch.nn as nn
import torch.nn.functional as F

pretrained = nn.Parameter(torch.randn(6, 4))
new_rows = nn.Parameter(torch.zeros(2, 4))
classifier = nn.Linear(4, 2)
opt = torch.optim.Adam([pretrained, new_rows, *classifier.parameters()], lr=1e-2)
for step in range(2):
    ids, labels = torch.randint(0, 8, (3, 5)), torch.randint(0, 2, (3,))
    table = torch.cat([pretrained, new_rows], dim=0)
    loss = F.cross_entropy(classifier(F.embedding(ids, table).mean(1)), labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
