# Source: https://github.com/pyg-team/pytorch-frame/pull/229
"""pytorch-frame's HashTextEmbedder with the PR's fix: the looked-up embeddings are returned
detached, `self.embedding(idx).detach()`, so the materialized text features are plain data and
every training iteration backwards through its own graph only."""
from typing import List, Optional

import torch
from torch import Tensor
from torch.nn import Embedding


class HashTextEmbedder:
    r"""A hash-based light-weight text embedder for testing purposes."""
    def __init__(self, out_channels: int, num_hash_bins: int = 64,
                 device: Optional[torch.device] = None):
        self.out_channels = out_channels
        self.num_hash_bins = num_hash_bins
        self.device = device
        self.embedding = Embedding(num_hash_bins, out_channels).to(device)

    def __call__(self, sentences: List[str]) -> Tensor:
        idx = torch.LongTensor(
            [hash(s) % self.num_hash_bins for s in sentences])
        return self.embedding(idx).detach()


class TextTabularDataset:
    def __init__(self, sentences, numerical, target, text_embedder):
        self.sentences = sentences
        self.numerical = numerical
        self.target = target
        self.text_embedder = text_embedder

    def materialize(self):
        self.feat_text = self.text_embedder(self.sentences)
        self.feat_num = self.numerical
        return self

    def batches(self, batch_size):
        for i in range(0, len(self.sentences), batch_size):
            yield (self.feat_text[i:i + batch_size], self.feat_num[i:i + batch_size],
                   self.target[i:i + batch_size])


class Regressor(torch.nn.Module):
    def __init__(self, text_channels, num_channels, hidden=16):
        super().__init__()
        self.text_encoder = torch.nn.Linear(text_channels, hidden)
        self.num_encoder = torch.nn.Linear(num_channels, hidden)
        self.head = torch.nn.Sequential(torch.nn.ReLU(), torch.nn.Linear(hidden, 1))

    def forward(self, feat_text, feat_num):
        return self.head(self.text_encoder(feat_text) + self.num_encoder(feat_num)).squeeze(-1)


words = ['red', 'green', 'blue', 'small', 'large', 'old', 'new']
sentences = [' '.join(words[(i * k) % len(words)] for k in (1, 2, 3)) for i in range(24)]
dataset = TextTabularDataset(sentences, torch.randn(24, 3), torch.randn(24),
                             HashTextEmbedder(out_channels=8, num_hash_bins=16))
dataset.materialize()

model = Regressor(text_channels=8, num_channels=3)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(2):
    for feat_text, feat_num, y in dataset.batches(batch_size=8):
        pred = model(feat_text, feat_num)
        loss = torch.nn.functional.mse_loss(pred, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(epoch, loss.item())
