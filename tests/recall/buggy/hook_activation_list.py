"""Activation-sparsity regulariser fed by a forward hook that appends every output of the hidden
layer to a list; the list is never emptied, so step 2's penalty includes step 1's activations."""
import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(5, 10), nn.ReLU(), nn.Linear(10, 2))
activations = []
model[1].register_forward_hook(lambda module, inputs, output: activations.append(output))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(3):
    x, y = torch.randn(4, 5), torch.randint(0, 2, (4,))
    logits = model(x)
    sparsity = sum(a.abs().mean() for a in activations)
    loss = nn.functional.cross_entropy(logits, y) + 1e-3 * sparsity
    opt.zero_grad()
    loss.backward()  # expect: GG101
    opt.step()
