# Source: https://discuss.pytorch.org/t/runtimeerror-trying-to-backward-through-the-graph-a-second-time-but-the-buffers-have-already-been-freed-specify-retain-graph-true-when-calling-backward-the-first-time/6795
"""The opening post's recurrent model trained one step per call, with the kept hidden state
detached at the start of each step (truncated back-propagation through time, the usual fix for
recurrent state; the thread's top answer only explains retain_graph=True): each train_it call
backwards only its own step's graph, and the value of the state still carries over."""
import torch
import torch.nn as nn


class RecurrentStep(nn.Module):
    def __init__(self, n_in, n_hidden, n_out):
        super().__init__()
        self.i2h = nn.Linear(n_in, n_hidden)
        self.h2h = nn.Linear(n_hidden, n_hidden)
        self.h2o = nn.Linear(n_hidden, n_out)
        self.hidden = torch.zeros(1, n_hidden)
        self.loss = nn.MSELoss()
        self.optimizer = torch.optim.SGD(self.parameters(), lr=0.05)

    def forward(self, x):
        self.hidden = torch.tanh(self.i2h(x) + self.h2h(self.hidden))
        return self.h2o(self.hidden)

    def train_it(self, x, y):
        self.hidden = self.hidden.detach()
        prediction = self(x)
        loss = self.loss(prediction, y)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss.item()


model = RecurrentStep(3, 8, 1)
sequence = torch.randn(6, 1, 3)
targets = torch.randn(6, 1, 1)
for step in range(len(sequence)):
    print(step, model.train_it(sequence[step], targets[step]))
