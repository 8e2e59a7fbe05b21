# Source: https://runebook.dev/ru/docs/pytorch/generated/torch.nn.utils.prune.customfrommask
"""Padding-mask layer after a tanh encoder (fixed: out-of-place masked_fill).

Writing the padding mask in place (``x[mask] = 0``) overwrote the output that
``tanh`` saved for its backward, so ``loss.backward()`` raised "modified by an
inplace operation".  Fix, as the page recommends: return
``x.masked_fill(mask == 0, value)``, a new tensor, and leave the tanh output
untouched.
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
        return x.masked_fill(mask == 0, self.mask_value)


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
    loss.backward()
    optimizer.step()
    print(step, loss.item())
