# Source: https://theneuralbase.com/clip/learn/beginner/embedding-normalization-missing/
"""CLIP-style contrastive training that L2-normalizes the embeddings in place.

The page stresses that CLIP embeddings must be L2-normalized before cosine
similarities are computed, and gives the one-line fix
``torch.nn.functional.normalize(embedding, p=2, dim=-1)``.  This two-tower
image/text model does normalize, but with the in-place idiom familiar from
CLIP's zero-shot inference snippet, ``feat /= feat.norm(dim=-1, keepdim=True)``,
inside the *training* step.  ``feat.norm`` saves ``feat`` for its backward
pass; the in-place division then overwrites it, so the InfoNCE
``loss.backward()`` raises "one of the variables needed for gradient
computation has been modified by an inplace operation".

Fix: use the page's out-of-place ``F.normalize(feat, p=2, dim=-1)``.
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
        image_features /= image_features.norm(dim=-1, keepdim=True)
        text_features /= text_features.norm(dim=-1, keepdim=True)
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
    loss.backward()  # expect: GG103
    optimizer.step()
    print(step, loss.item())
