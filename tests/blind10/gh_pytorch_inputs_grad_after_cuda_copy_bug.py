# Source: https://github.com/pytorch/pytorch/issues/12627
"""The reporter's script: inputs.requires_grad = True, then inputs, targets = inputs.cuda(),
targets.cuda() rebinds inputs to the device copy, which is not a leaf; the loop backwards the loss
and prints inputs.grad, which is None (torch warns that a non-leaf's .grad is read). The forward
out = Net(inputs[0]) runs once before the loop, and the loop steps Adam between retained
backwards, so torch 2.13 then raises the in-place error at the second iteration's backward (the
step changed the Linear weight the graph saved); the report only saw the None. CPU-only, the move
is inputs.to(device, copy=True), the same ToCopyBackward0 copy a .cuda() records. Fix (the forum
answer the maintainer linked): make the device tensor the leaf; and run the forward in the loop."""
import torch
from torch import nn, optim

device = torch.device("cpu")

inputs = torch.Tensor(torch.randn(3, 5))
targets = torch.Tensor([1, 2, 3]).long()
inputs.requires_grad = True

inputs, targets = inputs.to(device, copy=True), targets.to(device, copy=True)

Net = nn.Sequential(
    nn.Linear(5, 5),
    nn.Softmax(dim=-1)
).to(device)

out = Net(inputs[0])
Net.train()
optimizer = optim.Adam(Net.parameters(), lr=0.001)
loss_fn = nn.NLLLoss()
for i in range(3):

    optimizer.zero_grad()

    loss = loss_fn(out.view(1, 5), targets[0].view(1))
    loss.backward(retain_graph=True)  # expect: GG103
    print(inputs.grad)  # expect: GG106
    optimizer.step()
