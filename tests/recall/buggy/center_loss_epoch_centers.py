"""Center loss with the class centers re-estimated at the start of every epoch from the current
features (a list comprehension stacked into a tensor) and used by all of the epoch's batches."""
import torch
import torch.nn as nn
import torch.nn.functional as F

n_classes = 3
feat_net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
classifier = nn.Linear(2, n_classes)
optimizer = torch.optim.Adam([*feat_net.parameters(), *classifier.parameters()], lr=1e-2)
X = torch.randn(18, 4)
Y = torch.arange(18) % n_classes

for epoch in range(2):
    feats = feat_net(X)
    centers = torch.stack([feats[Y == c].mean(0) for c in range(n_classes)])
    for i in range(0, 18, 6):
        f = feat_net(X[i:i + 6])
        y = Y[i:i + 6]
        loss = F.cross_entropy(classifier(f), y) + 0.05 * (f - centers[y]).pow(2).sum(1).mean()
        optimizer.zero_grad()
        loss.backward()  # expect: GG101
        optimizer.step()
