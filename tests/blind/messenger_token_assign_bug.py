# Source: https://github.com/sunlicai/MAE-DFER/issues/15
"""MAE-DFER's fine-tuning block (modeling_finetune.py): the first token of every local window is a
messenger token; the block attends over the messenger tokens of a clip and writes the result
back with x[:, 0] = ..., an in-place write into x, whose x[:, 0] view the attention's projection
saved for its backward."""
import torch
import torch.nn as nn


class Attention(nn.Module):
    def __init__(self, dim, heads=2):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        B, N, C = x.shape
        qkv = self.qkv(x).reshape(B, N, 3, self.heads, C // self.heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        attn = (q @ k.transpose(-2, -1) * (C // self.heads) ** -0.5).softmax(dim=-1)
        return self.proj((attn @ v).transpose(1, 2).reshape(B, N, C))


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.attn = Attention(dim)
        self.messenger_attn = Attention(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, dim * 2), nn.GELU(), nn.Linear(dim * 2, dim))

    def forward(self, x, b):
        x = x + self.attn(x)  # attention inside each window, x: (b * n, tokens, c)
        messenger_tokens = x[:, 0].reshape(b, -1, x.shape[-1])  # attn on 'n' dim
        messenger_tokens = messenger_tokens + self.messenger_attn(messenger_tokens)
        x[:, 0] = messenger_tokens.reshape(-1, x.shape[-1])
        return x + self.mlp(x)


block, head = Block(8), nn.Linear(8, 3)
optimizer = torch.optim.AdamW([*block.parameters(), *head.parameters()], lr=1e-3)
clips, windows, tokens = 2, 3, 5
for step in range(2):
    x = torch.randn(clips * windows, tokens, 8)
    out = block(x, clips).mean(dim=1).reshape(clips, windows, 8).mean(dim=1)
    loss = nn.functional.cross_entropy(head(out), torch.tensor([0, 2]))
    optimizer.zero_grad()
    loss.backward()  # expect: GG103
    optimizer.step()
