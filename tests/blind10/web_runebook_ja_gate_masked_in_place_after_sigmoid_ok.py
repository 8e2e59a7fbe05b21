# Source: https://runebook.dev/ja/docs/pytorch/autograd/torch.autograd.graph.allow_mutation_on_saved_tensors
"""The page's remedy: the training step (forward, the in-place pruning of the saved gates, and the
backward) runs inside torch.autograd.graph.allow_mutation_on_saved_tensors(), so autograd keeps
the original gates for sigmoid's backward when the statistic overwrites them."""
import torch
import torch.nn as nn

torch.manual_seed(0)


class GatedBlock(nn.Module):
    def __init__(self, d=12):
        super().__init__()
        self.value = nn.Linear(d, d)
        self.gate = nn.Linear(d, d)
        self.last_gate = None

    def forward(self, x):
        g = torch.sigmoid(self.gate(x))
        self.last_gate = g
        return self.value(x) * g


def gate_sparsity(block, threshold=0.3):
    g = block.last_gate
    g.masked_fill_(g < threshold, 0.0)
    return (g == 0).float().mean().item()


model = nn.Sequential(nn.Linear(6, 12), GatedBlock(), nn.Linear(12, 2))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
criterion = nn.CrossEntropyLoss()

for step in range(3):
    x, y = torch.randn(8, 6), torch.randint(0, 2, (8,))
    optimizer.zero_grad()
    with torch.autograd.graph.allow_mutation_on_saved_tensors():
        loss = criterion(model(x), y)
        sparsity = gate_sparsity(model[1])
        loss.backward()
    optimizer.step()
    print(step, loss.item(), sparsity)
