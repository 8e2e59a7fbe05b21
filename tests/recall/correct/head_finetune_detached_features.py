"""Few-shot head fine-tuning on detached support features, several inner steps per task."""
import torch
import torch.nn as nn

body = nn.Sequential(nn.Linear(6, 16), nn.ReLU())
head = nn.Linear(16, 3)
inner_opt = torch.optim.SGD(head.parameters(), lr=0.1)
for task in range(2):
    xs, ys = torch.randn(9, 6), torch.randint(0, 3, (9,))
    feats = body(xs).detach()
    for inner_step in range(3):
        loss = nn.functional.cross_entropy(head(feats), ys)
        inner_opt.zero_grad()
        loss.backward()
        inner_opt.step()
