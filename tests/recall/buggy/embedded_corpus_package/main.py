"""Intent classification with a trainable word embedding: the utterances are embedded once by a
helper module before training, so the second epoch backwards through the freed lookups."""
import torch
import torch.nn as nn

from data import build_batches
from train import fit

utterances = [[1, 4, 2], [3, 3], [5, 1, 1, 2], [2, 6]]
labels = [0, 1, 0, 1]
embedding = nn.Embedding(8, 5)
model = nn.Linear(5, 2)
optimizer = torch.optim.Adam([*embedding.parameters(), *model.parameters()], lr=1e-2)
batches = build_batches(embedding, utterances, labels)
fit(model, optimizer, batches, epochs=2)
