# Source: https://taourl.com/read-2626058.html
"""Fine-tuning a pretrained language model fails in `loss.backward()` with "element 0 of tensors does
not require grad and does not have a grad_fn": the article's cause is that no parameter the loss
depends on requires grad (the trainable ones were never re-enabled after freezing). Here the user
freezes the whole model, then `unfreeze_top(model, n)` is meant to re-enable the top blocks and the
LM head, but it matches names of the form "layer.<i>." (BERT's naming) while this model's blocks are
named "blocks.<i>." and its head "lm_head", so nothing is re-enabled. Fix from the article: make sure
the parameters to train have requires_grad=True (here: match the model's real parameter names). The
transformers model is a small stand-in written in the file.
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
    wanted = [f"layer.{i}." for i in range(n_blocks - n, n_blocks)] + ["classifier"]
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
    loss.backward()  # expect: GG104
    optimizer.step()
    print(step, loss.item())
