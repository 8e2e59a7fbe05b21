# Source: https://github.com/jasonppy/word-discovery/pull/4
"""VG-HuBERT's audio encoder with the fix of PR 4: the convolutional position embedding is added out
of place, `x = x + x_conv`, so the input the pos_conv Conv1d saved keeps its values. The encoder's
forward is the repository's with small sizes and nn.TransformerEncoder standing in for fairseq's;
an audio-image InfoNCE loss against random image embeddings stands in for the visual branch."""
import math
from types import SimpleNamespace

import torch
import torch.nn as nn
import torch.nn.functional as F


class SamePad(nn.Module):
    def __init__(self, kernel_size):
        super().__init__()
        self.remove = 1 if kernel_size % 2 == 0 else 0

    def forward(self, x):
        if self.remove > 0:
            x = x[:, :, : -self.remove]
        return x


class ConvFeatureExtractionModel(nn.Module):
    def __init__(self, conv_layers, dropout=0.0, conv_bias=False):
        super().__init__()

        def block(n_in, n_out, k, stride):
            conv = nn.Conv1d(n_in, n_out, k, stride=stride, bias=conv_bias)
            nn.init.kaiming_normal_(conv.weight)
            return nn.Sequential(conv, nn.Dropout(p=dropout), nn.GELU())

        in_d = 1
        self.conv_layers = nn.ModuleList()
        for dim, k, stride in conv_layers:
            self.conv_layers.append(block(in_d, dim, k, stride))
            in_d = dim

    def forward(self, x):
        # BxT -> BxCxT
        x = x.unsqueeze(1)
        for conv in self.conv_layers:
            x = conv(x)
        return x


class AudioEncoder(nn.Module):
    def __init__(self, args):
        super().__init__()
        self.args = args
        self.embed = args.conv_dim
        self.feature_extractor = ConvFeatureExtractionModel([(args.conv_dim, 10, 5), (args.conv_dim, 3, 2)])
        self.post_extract_proj = nn.Linear(self.embed, args.encoder_embed_dim)
        self.dropout_input = nn.Dropout(args.dropout_input)
        self.dropout_features = nn.Dropout(args.dropout_features)
        self.feature_grad_mult = args.feature_grad_mult

        self.pos_conv = nn.Conv1d(args.encoder_embed_dim, args.encoder_embed_dim, kernel_size=args.conv_pos,
                                  padding=args.conv_pos // 2, groups=args.conv_pos_groups)
        dropout = 0
        std = math.sqrt((4 * (1.0 - dropout)) / (args.conv_pos * self.args.encoder_embed_dim))
        nn.init.normal_(self.pos_conv.weight, mean=0, std=std)
        nn.init.constant_(self.pos_conv.bias, 0)

        self.pos_conv = nn.utils.weight_norm(self.pos_conv, name="weight", dim=2)
        self.pos_conv = nn.Sequential(self.pos_conv, SamePad(args.conv_pos), nn.GELU())
        layer = nn.TransformerEncoderLayer(args.encoder_embed_dim, nhead=2, dim_feedforward=64, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=args.layer_use + 1)
        self.layer_norm = nn.LayerNorm(self.embed)
        if self.args.use_audio_cls_token:
            self.cls_token = torch.nn.Parameter(torch.randn((1, 1, args.encoder_embed_dim)), requires_grad=True)

    def forward(self, source, padding_mask=None):
        if self.feature_grad_mult > 0:
            features = self.feature_extractor(source)
        else:
            with torch.no_grad():
                features = self.feature_extractor(source)

        features_pen = features.float().pow(2).mean()

        features = features.transpose(1, 2)
        features = self.layer_norm(features)
        unmasked_features = features.clone()

        if self.post_extract_proj is not None:
            features = self.post_extract_proj(features)

        features = self.dropout_input(features)
        unmasked_features = self.dropout_features(unmasked_features)

        x = features
        x_conv = self.pos_conv(x.transpose(1, 2))
        x_conv = x_conv.transpose(1, 2)
        x = x + x_conv
        if self.args.use_audio_cls_token:
            x = torch.cat([self.cls_token.repeat(x.shape[0], 1, 1), x], dim=1)

        layer_feats = self.encoder(x, src_key_padding_mask=padding_mask)
        cls_token = layer_feats[:, 0]
        features = layer_feats[:, 1:]
        return {"features": features, "cls_token": cls_token, "features_pen": features_pen}


def info_nce(audio, image, temperature=0.07):
    logits = F.normalize(audio, dim=-1) @ F.normalize(image, dim=-1).T / temperature
    labels = torch.arange(audio.shape[0])
    return (F.cross_entropy(logits, labels) + F.cross_entropy(logits.T, labels)) / 2


args = SimpleNamespace(conv_dim=32, encoder_embed_dim=32, dropout_input=0.1, dropout_features=0.1,
                       feature_grad_mult=1.0, conv_pos=16, conv_pos_groups=4, layer_use=1,
                       use_audio_cls_token=True)
audio_encoder = AudioEncoder(args)
optimizer = torch.optim.AdamW(audio_encoder.parameters(), lr=1e-4)
for step in range(2):
    audio = torch.randn(4, 1600)
    image_embeddings = torch.randn(4, 32)
    out = audio_encoder(audio)
    loss = info_nce(out["cls_token"], image_embeddings) + 0.01 * out["features_pen"]
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(step, loss.item())
