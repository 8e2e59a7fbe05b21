"""Extending a pretrained vocabulary: the embedding table is the concatenation of the old rows and
new trainable rows, built once before fine-tuning. Concatenation and lookup save no float
tensors, so every later step re-runs the freed concatenation node without an error, and the
lookups see the rows as they were before the first update."""
import torch
import torch.nn as nn
import torch.nn.functional as F

pretrained = nn.Parameter(torch.randn(6, 4))
new_rows = nn.Parameter(torch.zeros(2, 4))
classifier = nn.Linear(4, 2)
opt = torch.optim.Adam([pretrained, new_rows, *classifier.parameters()], lr=1e-2)
table = torch.cat([pretrained, new_rows], dim=0)

for step in range(2):
    ids, labels = torch.randint(0, 8, (3, 5)), torch.randint(0, 2, (3,))
    sentence = F.embedding(ids, table).mean(1)
    loss = F.cross_entropy(classifier(sentence), labels)
    opt.zero_grad()
    loss.backward()  # expect: GG102
    opt.step()
