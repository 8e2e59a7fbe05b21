# Source: https://taourl.com/read-2626058.html
"""Fine-tuning a pretrained language model with the article's fix for "element 0 of tensors does not
require grad": after freezing the whole model, `unfreeze_top(model, n)` re-enables requires_grad on
the parameters to train, matching this model's real names ("blocks.<i>." for the top blocks and
"lm_head"), so the loss depends on parameters that require grad. The transformers model is a small
stand-in written in the file.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.ln = nn.LayerNorm(d)
        self.ff = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, h):
        return h + self.ff(self.ln(h))


class TinyCausalLM(nn.Module):
    def __init__(self, vocab, d, n_blocks):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.blocks = nn.ModuleList([Block(d) for _ in range(n_blocks)])
        self.lm_head = nn.Linear(d, vocab)

    def forward(self, ids):
        h = self.embed(ids)
        for blk in self.blocks:
            h = blk(h)
        return self.lm_head(h)


def from_pretrained(vocab=50, d=16, n_blocks=4):
    torch.manual_seed(0)
    return TinyCausalLM(vocab, d, n_blocks)


def freeze_all(model):
    for param in model.parameters():
        param.requires_grad = False


def unfreeze_top(model, n, n_blocks=4):
    wanted = [f"blocks.{i}." for i in range(n_blocks - n, n_blocks)] + ["lm_head"]
    for name, param in model.named_parameters():
        if any(w in name for w in wanted):
            param.requires_grad = True


model = from_pretrained()
freeze_all(model)
unfreeze_top(model, 1)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
ids = torch.randint(0, 50, (2, 8))
for step in range(2):
    logits = model(ids[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), ids[:, 1:].reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(step, loss.item())
