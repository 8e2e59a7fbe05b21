"""Intent classification with a trainable word embedding looked up inside the training step."""
import torch
import torch.nn as nn

from data import build_batches
from train import fit

embedding = nn.Embedding(8, 5)
model = nn.Linear(5, 2)
optimizer = torch.optim.Adam([*embedding.parameters(), *model.parameters()], lr=1e-2)
batches = build_batches([[1, 4, 2], [3, 3], [5, 1, 1, 2], [2, 6]], [0, 1, 0, 1])
fit(embedding, model, optimizer, batches, epochs=2)
