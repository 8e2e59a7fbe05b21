# Source: https://github.com/laekov/fastmoe/issues/49
"""FastMoE's Megatron adapter patches forward_step to add the gates' balance losses to the LM loss,
but builds their mean with `torch.tensor(loss_list)`, which copies the values into a new leaf with
no grad_fn. The issue: the balance loss is never optimized. torch raises nothing (the LM loss
still has a graph; the balance term is a constant), so this is a clean `_bug`: the gates get no
gradient from it. Fix from the issue: build it from the losses themselves (torch.stack / torch.cat).
Megatron's model, get_args and torch.distributed are small stand-ins (one process).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Args:
    balance_strategy = "gshard"
    balance_loss_weight = 1e-2


def get_args():
    return Args()


class GShardGate(nn.Module):
    def __init__(self, d_model, num_expert, top_k=2):
        super().__init__()
        self.gate = nn.Linear(d_model, num_expert)
        self.num_expert, self.top_k = num_expert, top_k
        self.loss = None

    def set_loss(self, loss):
        self.loss = loss

    def get_loss(self, clear=True):
        loss = self.loss
        if clear:
            self.loss = None
        return loss

    def forward(self, x):
        score = F.softmax(self.gate(x), dim=-1)
        top_val, top_idx = torch.topk(score, k=self.top_k, dim=-1)
        fraction = F.one_hot(top_idx[:, 0], self.num_expert).float().mean(0)
        self.set_loss((fraction * score.mean(0)).sum() * self.num_expert)
        return top_idx, top_val


class MoEMLP(nn.Module):
    def __init__(self, d_model, num_expert):
        super().__init__()
        self.gate = GShardGate(d_model, num_expert)
        self.experts = nn.ModuleList([nn.Linear(d_model, d_model) for _ in range(num_expert)])

    def forward(self, x):
        top_idx, top_val = self.gate(x)
        out = torch.zeros_like(x)
        for k in range(top_idx.shape[1]):
            for e, expert in enumerate(self.experts):
                sel = top_idx[:, k] == e
                if sel.any():
                    out[sel] = out[sel] + top_val[sel, k:k + 1] * expert(x[sel])
        return out


class Layer(nn.Module):
    def __init__(self, d_model, num_expert):
        super().__init__()
        self.mlp = MoEMLP(d_model, num_expert)

    def forward(self, x):
        return x + self.mlp(x)


class Transformer(nn.Module):
    def __init__(self, d_model, num_expert, n_layers):
        super().__init__()
        self.layers = nn.ModuleList([Layer(d_model, num_expert) for _ in range(n_layers)])

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


class LanguageModel(nn.Module):
    def __init__(self, vocab, d_model, num_expert, n_layers):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        self.transformer = Transformer(d_model, num_expert, n_layers)
        self.head = nn.Linear(d_model, vocab)

    def forward(self, tokens):
        return self.head(self.transformer(self.embed(tokens)))


class GPTModel(nn.Module):
    def __init__(self, vocab=20, d_model=8, num_expert=4, n_layers=2):
        super().__init__()
        self.language_model = LanguageModel(vocab, d_model, num_expert, n_layers)

    def forward(self, tokens):
        return self.language_model(tokens)


def forward_step(data_iterator, model, input_tensor):
    tokens, labels = next(data_iterator)
    logits = model(tokens)
    loss = F.cross_entropy(logits, labels)
    return loss, {"lm loss": loss.detach()}


def patch_forward_step(forward_step_func):
    if not get_args().balance_strategy:
        return forward_step_func

    def forward_step_with_balance_loss(data_iterator, model, input_tensor):
        args = get_args()
        output = forward_step_func(data_iterator, model, input_tensor)
        loss_name = args.balance_strategy + "_loss"
        if hasattr(model, 'module'):
            model = model.module

        loss_list = [l.mlp.gate.get_loss(clear=False) for l in model.language_model.transformer.layers]
        (loss, state_dict), bal_loss = (
            output,
            (torch.tensor(loss_list, device=loss_list[0].device).mean() * args.balance_loss_weight).float(),
        )
        averaged_bal_loss = bal_loss.clone().detach()  # all_reduce over one process
        loss += bal_loss
        state_dict[loss_name] = averaged_bal_loss
        return loss, state_dict

    return forward_step_with_balance_loss


def data_stream(vocab=20, n=16):
    while True:
        yield torch.randint(0, vocab, (n,)), torch.randint(0, vocab, (n,))


model = GPTModel()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
step = patch_forward_step(forward_step)
it = data_stream()
for iteration in range(3):
    optimizer.zero_grad()
    loss, state = step(it, model, None)
    loss.backward()
    optimizer.step()
