# Source: https://devbookmarks.com/p/pytorch-answer-dropout-inplace
"""Self-attention block with ``nn.Dropout(inplace=True)`` applied to the softmax weights.

The article explains in-place dropout as a memory saver and warns that an
in-place operation can overwrite values needed for computing gradients, which
autograd's version counter then reports as an error.  This attention layer uses
exactly that "memory-saving" option on the attention probabilities:
``softmax`` saves its *output* for the backward pass, and the in-place dropout
then rescales/zeroes that very tensor, so ``loss.backward()`` raises "one of the
variables needed for gradient computation has been modified by an inplace
operation" (output 0 of SoftmaxBackward0).

Fix: keep the default ``inplace=False`` for the attention dropout, so dropout
returns a new tensor and the saved softmax output stays intact.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

BATCH, SEQ, D_MODEL, N_CLASSES = 4, 6, 16, 3


class SelfAttention(nn.Module):
    def __init__(self, d_model, p=0.1):
        super().__init__()
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out = nn.Linear(d_model, d_model)
        self.attn_drop = nn.Dropout(p, inplace=True)  # "saves memory"

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
        attn = F.softmax(scores, dim=-1)
        attn = self.attn_drop(attn)
        return self.out(attn @ v)


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = SelfAttention(D_MODEL)
        self.head = nn.Linear(D_MODEL, N_CLASSES)

    def forward(self, x):
        return self.head(self.attn(x).mean(dim=1))


x = torch.randn(BATCH, SEQ, D_MODEL)
y = torch.randint(0, N_CLASSES, (BATCH,))

model = Classifier()
model.train()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

for step in range(3):
    optimizer.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()  # expect: GG103
    optimizer.step()
    print(step, loss.item())
