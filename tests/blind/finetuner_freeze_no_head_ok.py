# Source: https://github.com/jina-ai/finetuner/issues/435
"""Fine-tuning an embedding model the way finetuner's fit(freeze=True) did: every parameter of the
pretrained backbone is frozen, and a trainable projection head is only attached when output_dim
is given. Called with freeze=True and an output_dim, the new head is trainable and the backward
has a graph to walk."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def backbone():
    return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())


def to_embedding_model(model, freeze=False, output_dim=None):
    if freeze:
        for param in model.parameters():
            param.requires_grad = False
    if output_dim:
        model = nn.Sequential(model, nn.Linear(8, output_dim))
    return model


def triplet_loss(anchor, positive, negative, margin=1.0):
    return F.relu((anchor - positive).pow(2).sum(1) - (anchor - negative).pow(2).sum(1) + margin).mean()


def fit(model, batches, freeze=False, output_dim=None, epochs=1):
    embed_model = to_embedding_model(model, freeze=freeze, output_dim=output_dim)
    optimizer = torch.optim.Adam(embed_model.parameters(), lr=1e-3)
    for epoch in range(epochs):
        for anchor, positive, negative in batches:
            loss = triplet_loss(embed_model(anchor), embed_model(positive), embed_model(negative))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    return embed_model


batches = [tuple(torch.randn(2, 3, 8, 8) for _ in range(3)) for _ in range(2)]
fit(backbone(), batches, freeze=True, output_dim=4)
