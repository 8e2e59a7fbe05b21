# Source: https://lynx-cortex.pages.dev/phase-25-pytorch-internals/break/00-break-in-place-op-autograd/
"""mini-GPT transformer block whose residual connections are written as in-place ``h.add_(...)``.

The course page breaks its character-level mini-GPT on purpose: in
``src/minigpt/block.py`` the pre-norm residuals ``h = h + self.attn(self.ln1(h))``
and ``h = h + self.ffn(self.ln2(h))`` are replaced by ``h.add_(self.attn(self.ln1(h)))``
and ``h.add_(self.ffn(self.ln2(h)))``.  The forward values are identical, but
``LayerNorm`` saved ``h`` (its input) for the backward pass and ``h.add_``
then overwrites it, so ``loss.backward()`` raises "one of the variables needed
for gradient computation has been modified by an inplace operation" (the
saved input of NativeLayerNormBackward is at a newer version).

Fix (the page's control run): keep the residuals out of place,
``h = h + ...`` (see the _ok twin).
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

VOCAB_SIZE = 32
BLOCK_SIZE = 8
N_EMBD = 32
N_HEAD = 4
N_LAYER = 2
BATCH = 4


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, block_size):
        super().__init__()
        self.n_head = n_head
        self.qkv = nn.Linear(n_embd, 3 * n_embd)
        self.proj = nn.Linear(n_embd, n_embd)
        self.register_buffer(
            "mask", torch.tril(torch.ones(block_size, block_size)).view(1, 1, block_size, block_size))

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.qkv(x).split(C, dim=2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) / math.sqrt(k.size(-1))
        att = att.masked_fill(self.mask[:, :, :T, :T] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.proj(y)


class FeedForward(nn.Module):
    def __init__(self, n_embd):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(n_embd, 4 * n_embd), nn.GELU(), nn.Linear(4 * n_embd, n_embd))

    def forward(self, x):
        return self.net(x)


class Block(nn.Module):
    def __init__(self, n_embd, n_head, block_size):
        super().__init__()
        self.ln1 = nn.LayerNorm(n_embd)
        self.attn = CausalSelfAttention(n_embd, n_head, block_size)
        self.ln2 = nn.LayerNorm(n_embd)
        self.ffn = FeedForward(n_embd)

    def forward(self, h):
        h.add_(self.attn(self.ln1(h)))  # in-place
        h.add_(self.ffn(self.ln2(h)))   # in-place
        return h


class MiniGPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok_emb = nn.Embedding(VOCAB_SIZE, N_EMBD)
        self.pos_emb = nn.Embedding(BLOCK_SIZE, N_EMBD)
        self.blocks = nn.ModuleList([Block(N_EMBD, N_HEAD, BLOCK_SIZE) for _ in range(N_LAYER)])
        self.ln_f = nn.LayerNorm(N_EMBD)
        self.head = nn.Linear(N_EMBD, VOCAB_SIZE)

    def forward(self, idx, targets=None):
        B, T = idx.shape
        pos = torch.arange(T)
        h = self.tok_emb(idx) + self.pos_emb(pos)
        for block in self.blocks:
            h = block(h)
        logits = self.head(self.ln_f(h))
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, VOCAB_SIZE), targets.view(-1))
        return logits, loss


def get_batch(data):
    ix = torch.randint(len(data) - BLOCK_SIZE - 1, (BATCH,))
    x = torch.stack([data[i:i + BLOCK_SIZE] for i in ix])
    y = torch.stack([data[i + 1:i + BLOCK_SIZE + 1] for i in ix])
    return x, y


data = torch.randint(0, VOCAB_SIZE, (500,))
model = MiniGPT()
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)

for step in range(5):
    xb, yb = get_batch(data)
    logits, loss = model(xb, yb)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()  # expect: GG103
    optimizer.step()
    print(f"step {step}: loss {loss.item():.4f}")
