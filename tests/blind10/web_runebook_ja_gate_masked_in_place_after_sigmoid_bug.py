# Source: https://runebook.dev/ja/docs/pytorch/autograd/torch.autograd.graph.allow_mutation_on_saved_tensors
"""The Japanese runebook page on torch.autograd.graph.allow_mutation_on_saved_tensors: by default
autograd forbids overwriting a tensor it saved for the gradient, and the most common trouble is
"one of the variables needed for gradient computation has been modified by an inplace operation";
the page presents allow_mutation_on_saved_tensors() as the switch that permits such a mutation
(autograd then keeps the original values), around the forward, the mutation and the backward. A gated MLP whose sigmoid gates, saved by
sigmoid for its backward, are pruned in place (small gates zeroed) for a sparsity statistic before
the loss is backwarded."""
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
    loss = criterion(model(x), y)
    sparsity = gate_sparsity(model[1])
    loss.backward()  # expect: GG103
    optimizer.step()
    print(step, loss.item(), sparsity)
