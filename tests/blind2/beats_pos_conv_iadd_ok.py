# Source: https://github.com/microsoft/unilm/pull/999
"""Fine-tuning BEATs (microsoft/unilm) with TransformerEncoder.extract_features as the PR changes it:
the convolutional positional embedding is added out of place (x = x.clone() + x_conv), so the
view of x that pos_conv's Conv1d saved for its backward is left as it was. Small dimensions and
random fbank features stand in for the pretrained checkpoint and the audio."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class SamePad(nn.Module):
    def __init__(self, kernel_size):
        super().__init__()
        self.remove = 1 if kernel_size % 2 == 0 else 0

    def forward(self, x):
        if self.remove > 0:
            x = x[:, :, :-self.remove]
        return x


class TransformerEncoder(nn.Module):
    def __init__(self, embed_dim=16, conv_pos=8, conv_pos_groups=4, layers=2, dropout=0.1):
        super().__init__()
        self.dropout = dropout
        self.embedding_dim = embed_dim
        self.pos_conv = nn.Conv1d(embed_dim, embed_dim, kernel_size=conv_pos, padding=conv_pos // 2,
                                  groups=conv_pos_groups)
        self.pos_conv = nn.utils.weight_norm(self.pos_conv, name="weight", dim=2)
        self.pos_conv = nn.Sequential(self.pos_conv, SamePad(conv_pos), nn.GELU())
        self.layers = nn.ModuleList(
            nn.TransformerEncoderLayer(embed_dim, 2, 32, dropout, batch_first=False) for _ in range(layers))
        self.layer_norm_first = False
        self.layer_norm = nn.LayerNorm(self.embedding_dim)

    def forward(self, x, padding_mask=None):
        x, layer_results = self.extract_features(x, padding_mask)
        return x

    def extract_features(self, x, padding_mask=None):
        if padding_mask is not None:
            x[padding_mask] = 0

        x_conv = self.pos_conv(x.transpose(1, 2))
        x_conv = x_conv.transpose(1, 2)
        x = x.clone() + x_conv

        if not self.layer_norm_first:
            x = self.layer_norm(x)

        x = F.dropout(x, p=self.dropout, training=self.training)

        # B x T x C -> T x B x C
        x = x.transpose(0, 1)
        layer_results = []
        for layer in self.layers:
            x = layer(x)
            layer_results.append(x)

        # T x B x C -> B x T x C
        x = x.transpose(0, 1)
        return x, layer_results


class BEATs(nn.Module):
    def __init__(self, embed_dim=16, patch=4):
        super().__init__()
        self.patch_embedding = nn.Conv2d(1, 12, kernel_size=patch, stride=patch, bias=False)
        self.layer_norm = nn.LayerNorm(12)
        self.post_extract_proj = nn.Linear(12, embed_dim)
        self.encoder = TransformerEncoder(embed_dim)

    def extract_features(self, fbank, padding_mask=None):
        fbank = fbank.unsqueeze(1)
        features = self.patch_embedding(fbank)
        features = features.reshape(features.shape[0], features.shape[1], -1)
        features = features.transpose(1, 2)
        features = self.layer_norm(features)
        features = self.post_extract_proj(features)
        x = self.encoder(features, padding_mask=padding_mask)
        return x, padding_mask


class BEATsClassifier(nn.Module):
    def __init__(self, num_classes=3):
        super().__init__()
        self.beats = BEATs()
        self.fc = nn.Linear(16, num_classes)

    def forward(self, fbank):
        x, _ = self.beats.extract_features(fbank)
        return self.fc(x.mean(dim=1))


model = BEATsClassifier()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
model.train()
for step in range(2):
    fbank, labels = torch.randn(2, 16, 32), torch.randint(0, 2, (2, 3)).float()
    loss = F.binary_cross_entropy_with_logits(model(fbank), labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
