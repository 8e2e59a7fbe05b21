# Source: https://github.com/thuanz123/enhancing-transformers/issues/11
"""ViT-VQGAN (enhancing-transformers) with two ViTDecoders reading the same quantised tokens, with
the maintainer's fix: ViTDecoder.forward adds its position embedding out of place (token = token +
self.de_pos_embedding), so `quant`, which each decoder's first LayerNorm saves, is never
overwritten. einops' Rearrange is written out with reshape/transpose; sizes are tiny."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class PreNorm(nn.Module):
    def __init__(self, dim, fn):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.fn = fn

    def forward(self, x, **kwargs):
        return self.fn(self.norm(x), **kwargs)


class FeedForward(nn.Module):
    def __init__(self, dim, hidden_dim):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, hidden_dim), nn.Tanh(), nn.Linear(hidden_dim, dim))

    def forward(self, x):
        return self.net(x)


class Attention(nn.Module):
    def __init__(self, dim, heads=2, dim_head=8):
        super().__init__()
        inner_dim = dim_head * heads
        self.heads = heads
        self.scale = dim_head ** -0.5
        self.to_qkv = nn.Linear(dim, inner_dim * 3, bias=False)
        self.to_out = nn.Linear(inner_dim, dim)

    def forward(self, x):
        b, n, _ = x.shape
        q, k, v = (t.reshape(b, n, self.heads, -1).transpose(1, 2) for t in self.to_qkv(x).chunk(3, dim=-1))
        attn = (torch.matmul(q, k.transpose(-1, -2)) * self.scale).softmax(dim=-1)
        out = torch.matmul(attn, v).transpose(1, 2).reshape(b, n, -1)
        return self.to_out(out)


class Transformer(nn.Module):
    def __init__(self, dim, depth, heads, dim_head, mlp_dim):
        super().__init__()
        self.layers = nn.ModuleList([])
        for idx in range(depth):
            self.layers.append(nn.ModuleList([PreNorm(dim, Attention(dim, heads=heads, dim_head=dim_head)),
                                              PreNorm(dim, FeedForward(dim, mlp_dim))]))
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        for attn, ff in self.layers:
            x = attn(x) + x
            x = ff(x) + x
        return self.norm(x)


class ViTDecoder(nn.Module):
    def __init__(self, image_size, patch_size, dim, depth, heads, mlp_dim, out_channels=3, dim_head=8):
        super().__init__()
        self.grid = image_size // patch_size
        self.num_patches = self.grid * self.grid
        self.transformer = Transformer(dim, depth, heads, dim_head, mlp_dim)
        self.de_pos_embedding = nn.Parameter(torch.randn(1, self.num_patches, dim))
        self.conv_out = nn.ConvTranspose2d(dim, out_channels, kernel_size=patch_size, stride=patch_size)

    def forward(self, token: torch.FloatTensor) -> torch.FloatTensor:
        token = token + self.de_pos_embedding
        x = self.transformer(token)
        b, n, c = x.shape
        x = x.transpose(1, 2).reshape(b, c, self.grid, self.grid)   # Rearrange('b (h w) c -> b c h w')
        return self.conv_out(x)


class ViTEncoder(nn.Module):
    def __init__(self, image_size, patch_size, dim, channels=3):
        super().__init__()
        self.patch_size = patch_size
        self.to_patch_embedding = nn.Conv2d(channels, dim, kernel_size=patch_size, stride=patch_size)
        self.en_pos_embedding = nn.Parameter(torch.randn(1, (image_size // patch_size) ** 2, dim))

    def forward(self, img):
        x = self.to_patch_embedding(img).flatten(2).transpose(1, 2)
        return x + self.en_pos_embedding


class VectorQuantizer(nn.Module):
    def __init__(self, embed_dim, n_embed, beta=0.25):
        super().__init__()
        self.embedding = nn.Embedding(n_embed, embed_dim)
        self.beta = beta

    def forward(self, z):
        d = torch.cdist(z.reshape(-1, z.shape[-1]), self.embedding.weight)
        z_q = self.embedding(d.argmin(dim=1)).view(z.shape)
        loss = self.beta * F.mse_loss(z_q.detach(), z) + F.mse_loss(z_q, z.detach())
        z_q = z + (z_q - z).detach()
        return z_q, loss


encoder = ViTEncoder(image_size=8, patch_size=4, dim=16)
quantizer = VectorQuantizer(embed_dim=16, n_embed=32)
decoder_a = ViTDecoder(image_size=8, patch_size=4, dim=16, depth=1, heads=2, mlp_dim=32)
decoder_b = ViTDecoder(image_size=8, patch_size=4, dim=16, depth=2, heads=2, mlp_dim=32, out_channels=1)
params = [*encoder.parameters(), *quantizer.parameters(), *decoder_a.parameters(), *decoder_b.parameters()]
optimizer = torch.optim.Adam(params, lr=1e-4)
for step in range(2):
    img, depth_map = torch.randn(2, 3, 8, 8), torch.randn(2, 1, 8, 8)
    quant, q_loss = quantizer(encoder(img))
    rec_a = decoder_a(quant)
    rec_b = decoder_b(quant)
    loss = F.l1_loss(rec_a, img) + F.l1_loss(rec_b, depth_map) + q_loss
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
