# Source: https://github.com/pytorch/pytorch/issues/12627
"""The reporter's script with the fix from the forum answer the maintainer linked: the input is
created on the device and then made to require grad, so inputs is the leaf whose .grad backward
fills; the forward runs inside the loop, so every backward walks a fresh graph made with the
current weights and no retained graph is needed."""
import torch
from torch import nn, optim

device = torch.device("cpu")

inputs = torch.randn(3, 5).to(device)
targets = torch.Tensor([1, 2, 3]).long().to(device)
inputs.requires_grad = True

Net = nn.Sequential(
    nn.Linear(5, 5),
    nn.Softmax(dim=-1)
).to(device)

Net.train()
optimizer = optim.Adam(Net.parameters(), lr=0.001)
loss_fn = nn.NLLLoss()
for i in range(3):

    optimizer.zero_grad()
    inputs.grad = None

    out = Net(inputs[0])
    loss = loss_fn(out.view(1, 5), targets[0].view(1))
    loss.backward()
    print(inputs.grad)
    optimizer.step()
