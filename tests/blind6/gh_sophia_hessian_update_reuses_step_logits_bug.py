# Source: https://github.com/Liuhong99/Sophia/issues/1
"""Training a multimodal network with the Sophia optimizer (Liuhong99/Sophia, SophiaG): every
`hess_interval` steps train_sophiag.py estimates the Hessian from a loss on labels sampled from the
model's own logits, `loss_sampled.backward()` then `optimizer.update_hessian()`. The reporter's
loop built loss_sampled from the logits of the training step, whose graph that step's
loss.backward() had already freed, so loss_sampled.backward() fails ("Trying to backward through
the graph a second time"; the reporter fixed it by feeding the same batch to the model again in a
separate function, as train_sophiag.py does with its fresh `logits, _ = model(X, Y)`). SophiaG is
the repository's (update_hessian and step, trimmed to the non-capturable path); a small image-text
model and random batches stand in for the reporter's network and data."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim.optimizer import Optimizer


class SophiaG(Optimizer):
    def __init__(self, params, lr=1e-4, betas=(0.965, 0.99), rho=0.04, weight_decay=1e-1):
        defaults = dict(lr=lr, betas=betas, rho=rho, weight_decay=weight_decay)
        super(SophiaG, self).__init__(params, defaults)

    @torch.no_grad()
    def update_hessian(self):
        for group in self.param_groups:
            beta1, beta2 = group['betas']
            for p in group['params']:
                if p.grad is None:
                    continue
                state = self.state[p]
                if len(state) == 0:
                    state['step'] = torch.zeros((1,), dtype=torch.float, device=p.device)
                    state['exp_avg'] = torch.zeros_like(p, memory_format=torch.preserve_format)
                    state['hessian'] = torch.zeros_like(p, memory_format=torch.preserve_format)
                if 'hessian' not in state.keys():
                    state['hessian'] = torch.zeros_like(p, memory_format=torch.preserve_format)
                state['hessian'].mul_(beta2).addcmul_(p.grad, p.grad, value=1 - beta2)

    @torch.no_grad()
    def step(self, closure=None, bs=5120):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            beta1, beta2 = group['betas']
            for p in group['params']:
                if p.grad is None:
                    continue
                state = self.state[p]
                if len(state) == 0:
                    state['step'] = torch.zeros((1,), dtype=torch.float, device=p.device)
                    state['exp_avg'] = torch.zeros_like(p, memory_format=torch.preserve_format)
                    state['hessian'] = torch.zeros_like(p, memory_format=torch.preserve_format)
                exp_avg, hess = state['exp_avg'], state['hessian']
                state['step'] += 1
                p.mul_(1 - group['lr'] * group['weight_decay'])
                exp_avg.mul_(beta1).add_(p.grad, alpha=1 - beta1)
                ratio = (exp_avg.abs() / (group['rho'] * bs * hess + 1e-15)).clamp(None, 1)
                p.addcmul_(exp_avg.sign(), ratio, value=-group['lr'])
        return loss


class ImageTextModel(nn.Module):
    def __init__(self, vocab_size=30, dim=16):
        super().__init__()
        self.image_encoder = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.GELU(),
                                           nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, dim))
        self.tok_emb = nn.Embedding(vocab_size, dim)
        self.decoder = nn.GRU(dim, dim, batch_first=True)
        self.lm_head = nn.Linear(dim, vocab_size)

    def forward(self, images, tokens, targets):
        h0 = self.image_encoder(images).unsqueeze(0)
        out, _ = self.decoder(self.tok_emb(tokens), h0)
        logits = self.lm_head(out)
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
        return logits, loss


def get_batch(batch_size=4, seq_len=6, vocab_size=30):
    tokens = torch.randint(0, vocab_size, (batch_size, seq_len + 1))
    return torch.randn(batch_size, 3, 16, 16), tokens[:, :-1], tokens[:, 1:].contiguous()


def train_step(model, optimizer, batch):
    logits, loss = model(*batch)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step(bs=4 * 6)
    optimizer.zero_grad(set_to_none=True)
    return logits, loss


model = ImageTextModel()
optimizer = SophiaG(model.parameters(), lr=2e-4, betas=(0.965, 0.99), rho=0.05, weight_decay=0.1)
hess_interval = 2
for iter_num in range(4):
    batch = get_batch()
    logits, loss = train_step(model, optimizer, batch)
    if iter_num % hess_interval == hess_interval - 1:
        samp_dist = torch.distributions.Categorical(logits=logits)
        y_sample = samp_dist.sample()
        loss_sampled = F.cross_entropy(logits.view(-1, logits.size(-1)), y_sample.view(-1), ignore_index=-1)
        loss_sampled.backward()  # expect: GG101
        optimizer.update_hessian()
        optimizer.zero_grad(set_to_none=True)
    print(iter_num, loss.item())
