# Source: https://github.com/lucidrains/x-transformers/commit/67da12a3a8b15af08bd56be33ab9bcc1d221b01f
"""x-transformers `ContinuousTransformerWrapper` fed with features from a CNN encoder.

Before commit 67da12a ("eliminate inplace operations", PR #55) the wrappers added the
absolute positional embedding in place: `x = self.project_in(x); x += self.pos_emb(x)`.
With `dim_in=None`, `project_in` is `nn.Identity()`, so `x` is the caller's tensor itself.
Here (a per-frame CNN encoder whose last layer is `nn.Tanh`, then the transformer over the
frame sequence) that tensor is the Tanh output, which TanhBackward saved.  The `+=` bumps its
version and `loss.backward()` raises "one of the variables needed for gradient computation has
been modified by an inplace operation".

Fix (the commit's): `x = x + self.pos_emb(x)`.
"""
import torch
from torch import nn

torch.manual_seed(0)


def exists(val):
    return val is not None


def always(val):
    def inner(*args, **kwargs):
        return val
    return inner


class AbsolutePositionalEmbedding(nn.Module):
    def __init__(self, dim, max_seq_len):
        super().__init__()
        self.emb = nn.Embedding(max_seq_len, dim)
        self.init_()

    def init_(self):
        nn.init.normal_(self.emb.weight, std=0.02)

    def forward(self, x):
        n = torch.arange(x.shape[1], device=x.device)
        return self.emb(n)[None, :, :]


class AttentionLayers(nn.Module):
    """Small stand-in for x_transformers.AttentionLayers (pre-norm self-attention blocks)."""

    def __init__(self, dim, depth, heads=2):
        super().__init__()
        self.dim = dim
        self.has_pos_emb = False
        self.layers = nn.ModuleList([
            nn.TransformerEncoderLayer(dim, heads, dim_feedforward=dim * 2, dropout=0.0,
                                       batch_first=True, norm_first=True)
            for _ in range(depth)
        ])

    def forward(self, x, mask=None, mems=None, return_hiddens=False, **kwargs):
        hiddens = []
        for layer in self.layers:
            x = layer(x)
            hiddens.append(x)
        if return_hiddens:
            return x, hiddens
        return x


class Encoder(AttentionLayers):
    pass


class ContinuousTransformerWrapper(nn.Module):
    def __init__(self, *, max_seq_len, attn_layers, dim_in=None, dim_out=None, emb_dropout=0.,
                 use_pos_emb=True):
        super().__init__()
        assert isinstance(attn_layers, AttentionLayers)
        dim = attn_layers.dim
        self.max_seq_len = max_seq_len
        self.pos_emb = AbsolutePositionalEmbedding(dim, max_seq_len) if (use_pos_emb and not attn_layers.has_pos_emb) else always(0)
        self.emb_dropout = nn.Dropout(emb_dropout)
        self.project_in = nn.Linear(dim_in, dim) if exists(dim_in) else nn.Identity()
        self.attn_layers = attn_layers
        self.norm = nn.LayerNorm(dim)
        self.project_out = nn.Linear(dim, dim_out) if exists(dim_out) else nn.Identity()

    def forward(self, x, return_embeddings=False, mask=None, mems=None, **kwargs):
        b, n, _, device = *x.shape, x.device
        x = self.project_in(x)
        x += self.pos_emb(x)
        x = self.emb_dropout(x)
        x, intermediates = self.attn_layers(x, mask=mask, mems=mems, return_hiddens=True, **kwargs)
        x = self.norm(x)
        out = self.project_out(x) if not return_embeddings else x
        return out


class FrameEncoder(nn.Module):
    """Per-frame CNN producing a `dim`-sized feature squashed by Tanh."""

    def __init__(self, dim):
        super().__init__()
        self.conv = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(),
            nn.AdaptiveAvgPool2d(2), nn.Flatten(),
            nn.Linear(8 * 4, dim), nn.Tanh())

    def forward(self, frames):
        b, t = frames.shape[:2]
        feats = self.conv(frames.flatten(0, 1))
        return feats.view(b, t, -1)


class VideoClassifier(nn.Module):
    def __init__(self, dim=16, num_classes=5, max_frames=8):
        super().__init__()
        self.frame_encoder = FrameEncoder(dim)
        self.temporal = ContinuousTransformerWrapper(
            max_seq_len=max_frames,
            attn_layers=Encoder(dim=dim, depth=2),
            dim_out=num_classes)

    def forward(self, video):
        feats = self.frame_encoder(video)
        logits = self.temporal(feats)
        return logits.mean(dim=1)


def train(model, optimizer, criterion, epochs=2, steps=3):
    model.train()
    for epoch in range(epochs):
        for step in range(steps):
            video = torch.randn(2, 6, 3, 8, 8)
            labels = torch.randint(0, 5, (2,))
            optimizer.zero_grad()
            logits = model(video)
            loss = criterion(logits, labels)
            loss.backward()  # expect: GG103
            optimizer.step()
        print(f"epoch {epoch}: loss {loss.item():.4f}")


if __name__ == "__main__":
    model = VideoClassifier()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    criterion = nn.CrossEntropyLoss()
    train(model, optimizer, criterion)
