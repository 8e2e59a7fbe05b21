# Source: https://runebook.dev/ru/docs/pytorch/generated/torch.nn.utils.prune.customfrommask
"""Padding-mask layer that zeroes padded time steps in place, right after a tanh encoder.

The page describes a hand-written masking layer ("MaskLayer") that hides
padding positions of a (batch, seq_len, features) tensor, and warns that
writing the mask in place (``x[mask] = 0``) breaks the gradient chain.  Here
the layer is written that way and sits after a ``Linear -> Tanh`` token
encoder of a small sequence classifier.  ``tanh`` saves its *output* for the
backward pass (d tanh = 1 - y^2), and the masking layer overwrites exactly that
output in place, so ``loss.backward()`` raises "one of the variables needed for
gradient computation has been modified by an inplace operation" (output 0 of
TanhBackward0).

Fix (the page's recommendation): build a new tensor with the out-of-place
``x.masked_fill(mask == 0, value)`` instead of assigning into ``x``.
"""
import torch
import torch.nn as nn

torch.manual_seed(0)

BATCH, SEQ_LEN, VOCAB, EMB, HID, CLASSES = 4, 7, 30, 12, 16, 3


class MaskLayer(nn.Module):
    def __init__(self, mask_value=0.0):
        super().__init__()
        self.mask_value = mask_value

    def forward(self, x, mask):
        # x: (batch, seq_len, features); mask: (batch, seq_len, 1), 1 = real token
        x[(mask == 0).expand_as(x)] = self.mask_value
        return x


class SeqClassifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(VOCAB, EMB, padding_idx=0)
        self.encoder = nn.Sequential(nn.Linear(EMB, HID), nn.Tanh())
        self.mask_layer = MaskLayer()
        self.head = nn.Linear(HID, CLASSES)

    def forward(self, tokens):
        mask = (tokens != 0).unsqueeze(-1)
        h = self.encoder(self.emb(tokens))
        h = self.mask_layer(h, mask)
        pooled = h.sum(dim=1) / mask.sum(dim=1).clamp(min=1)
        return self.head(pooled)


lengths = torch.tensor([7, 5, 3, 6])
tokens = torch.randint(1, VOCAB, (BATCH, SEQ_LEN))
tokens[torch.arange(SEQ_LEN).unsqueeze(0) >= lengths.unsqueeze(1)] = 0  # padding
labels = torch.randint(0, CLASSES, (BATCH,))

model = SeqClassifier()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
criterion = nn.CrossEntropyLoss()

for step in range(3):
    optimizer.zero_grad()
    loss = criterion(model(tokens), labels)
    loss.backward()  # expect: GG103
    optimizer.step()
    print(step, loss.item())
