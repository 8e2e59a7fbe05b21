# Source: https://github.com/databricks/megablocks/pull/70
"""megablocks' LearnedRouter with the PR's fix: the top-k expert weights are normalised out of
place, `expert_weights = expert_weights / torch.norm(...)`, so the input torch.norm saved keeps its
value and the MoE model trains. LearnedRouter follows megablocks' (Arguments reduced to the fields
it reads); a small top-2 MoE layer of MLP experts and a regression loss on random tokens stand in
for the dMoE layer and the language model."""
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class Arguments:
    hidden_size: int = 16
    ffn_hidden_size: int = 32
    moe_num_experts: int = 4
    moe_top_k: int = 2
    moe_jitter_eps: float = 0.01
    moe_normalize_expert_weights: float = 1.0
    uniform_expert_assignment: bool = False


class LearnedRouter(torch.nn.Module):

    def __init__(self, args: Arguments):
        super().__init__()
        self.args = args
        self.layer = torch.nn.Linear(args.hidden_size, args.moe_num_experts, bias=False)

    def jitter(self, x):
        low = 1.0 - self.args.moe_jitter_eps
        high = 1.0 + self.args.moe_jitter_eps
        noise = torch.rand(x.size(), dtype=x.dtype, device=x.device)
        return low + noise * (high - low)

    def _top_k(self, scores):
        if self.args.moe_top_k == 1:
            return scores.max(dim=-1, keepdim=True)
        return torch.topk(scores, self.args.moe_top_k, dim=-1)

    def forward(self, x):
        if self.training and self.args.moe_jitter_eps is not None:
            x = x * self.jitter(x)

        scores = self.layer(x.view(-1, x.shape[-1])).softmax(dim=-1)
        expert_weights, expert_indices = self._top_k(scores)
        if self.args.moe_normalize_expert_weights:
            expert_weights = expert_weights / torch.norm(
                expert_weights, p=self.args.moe_normalize_expert_weights, dim=-1, keepdim=True)
        if self.args.moe_top_k == 1:
            expert_indices = expert_indices.squeeze(-1)
        return scores, expert_weights, expert_indices


class MoE(nn.Module):
    def __init__(self, args: Arguments):
        super().__init__()
        self.router = LearnedRouter(args)
        self.experts = nn.ModuleList(
            nn.Sequential(nn.Linear(args.hidden_size, args.ffn_hidden_size), nn.GELU(),
                          nn.Linear(args.ffn_hidden_size, args.hidden_size))
            for _ in range(args.moe_num_experts))

    def forward(self, x):
        in_shape = x.shape
        scores, expert_weights, expert_indices = self.router(x)
        tokens = x.view(-1, in_shape[-1])
        out = torch.zeros_like(tokens)
        for e, expert in enumerate(self.experts):
            token_idx, slot = torch.nonzero(expert_indices == e, as_tuple=True)
            if token_idx.numel():
                out = out.index_add(0, token_idx, expert_weights[token_idx, slot, None] * expert(tokens[token_idx]))
        return out.view(in_shape)


args = Arguments()
model = nn.Sequential(nn.Linear(8, args.hidden_size), MoE(args), nn.Linear(args.hidden_size, 8))
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
model.train()
for step in range(2):
    x, y = torch.randn(4, 6, 8), torch.randn(4, 6, 8)
    loss = F.mse_loss(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
