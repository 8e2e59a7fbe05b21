# Source: https://discuss.pytorch.org/t/runtimeerror-trying-to-backward-through-the-graph-a-second-time-but-the-buffers-have-already-been-freed-specify-retain-graph-true-when-calling-backward-the-first-time/6795
"""The thread's opening post: "it happens the second time I call loss.backward(), in a function
where the model's function execute one step of a recurrent network, which updates its hidden state
in the forward pass", `def train_it(self, x, y): prediction = self(x); loss = self.loss(prediction,
y)`. The hidden state the module keeps between calls hangs on the previous step's graph, which that
step's backward freed, so the second train_it call's backward raises "Trying to backward through
the graph a second time". The top answer explains retain_graph=True, which here would only
keep every old step alive (and, with the optimizer stepping between calls, make torch refuse the
modified weights). The post shows train_it's first two lines; the model is a one-step Elman cell
with a linear read-out, trained on a random sequence one step per call."""
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
        prediction = self(x)
        loss = self.loss(prediction, y)
        self.optimizer.zero_grad()
        loss.backward()  # expect: GG101
        self.optimizer.step()
        return loss.item()


model = RecurrentStep(3, 8, 1)
sequence = torch.randn(6, 1, 3)
targets = torch.randn(6, 1, 1)
for step in range(len(sequence)):
    print(step, model.train_it(sequence[step], targets[step]))
