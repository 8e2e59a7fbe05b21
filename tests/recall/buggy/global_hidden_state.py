"""A GRU cell's hidden state kept in a module-level global that a step function updates; it is
never detached, so the second step walks the first step's freed cell graph."""
import torch
import torch.nn as nn

rnn = nn.GRUCell(3, 5)
head = nn.Linear(5, 1)
opt = torch.optim.SGD([*rnn.parameters(), *head.parameters()], lr=0.1)
hidden = torch.zeros(2, 5)


def step(x, y):
    global hidden
    hidden = rnn(x, hidden)
    loss = (head(hidden) - y).pow(2).mean()
    opt.zero_grad()
    loss.backward()  # expect: GG101
    opt.step()


for t in range(3):
    step(torch.randn(2, 3), torch.randn(2, 1))
