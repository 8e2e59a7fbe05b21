# Source: https://theneuralbase.com/clip/learn/beginner/embedding-normalization-missing/
"""CLIP-style contrastive training with L2-normalized embeddings (fixed: F.normalize).

Normalizing in place, ``feat /= feat.norm(dim=-1, keepdim=True)``, overwrote
the tensor that ``feat.norm`` had saved for backward, so ``loss.backward()``
raised "modified by an inplace operation".  Fix, the page's one-liner:
``F.normalize(feat, p=2, dim=-1)``, which returns a new tensor.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

BATCH, IMG_DIM, VOCAB, TOKENS, EMB = 8, 32, 50, 6, 16


class TwoTower(nn.Module):
    def __init__(self):
        super().__init__()
        self.image_encoder = nn.Sequential(nn.Linear(IMG_DIM, 64), nn.ReLU(), nn.Linear(64, EMB))
        self.text_encoder = nn.EmbeddingBag(VOCAB, EMB, mode="mean")
        self.logit_scale = nn.Parameter(torch.tensor(2.659))  # log(1 / 0.07)

    def forward(self, images, captions):
        image_features = self.image_encoder(images)
        text_features = self.text_encoder(captions)
        image_features = F.normalize(image_features, p=2, dim=-1)
        text_features = F.normalize(text_features, p=2, dim=-1)
        return self.logit_scale.exp() * image_features @ text_features.t()


images = torch.randn(BATCH, IMG_DIM)
captions = torch.randint(0, VOCAB, (BATCH, TOKENS))
targets = torch.arange(BATCH)

model = TwoTower()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)

for step in range(3):
    optimizer.zero_grad()
    logits_per_image = model(images, captions)
    loss = (F.cross_entropy(logits_per_image, targets) + F.cross_entropy(logits_per_image.t(), targets)) / 2
    loss.backward()
    optimizer.step()
    print(step, loss.item())
