# Source: https://taourl.com/read-2483063.html
"""The Q&A article on backpropagating "through a compiled PyTorch module multiple times": after
loss.backward() and optimizer.step(), a second loss.backward() on the same loss raises "Trying to
backward through the graph a second time", since the graph was freed by the first backward; the
article's fixes are retain_graph=True or recomputing the forward pass. A trainer that wraps its
model the article's way (torch.compile is left out: the CPU test run has no compiler, and the
graph is the same) and, after each step, backwards the same loss again to log the gradient norm
at the updated weights."""
import torch

torch.manual_seed(0)


class Trainer:
    def __init__(self, model, lr=0.1):
        self.model = model  # torch.compile(model) in the article
        self.optimizer = torch.optim.SGD(model.parameters(), lr=lr)

    def grad_norm(self):
        return sum(p.grad.norm() ** 2 for p in self.model.parameters()).sqrt().item()

    def step(self, x):
        self.optimizer.zero_grad()
        y = self.model(x)
        loss = y.sum()
        loss.backward()
        self.optimizer.step()
        self.optimizer.zero_grad()
        loss.backward()  # expect: GG101
        return loss.item(), self.grad_norm()


trainer = Trainer(torch.nn.Linear(3, 1))
for it in range(2):
    x = torch.randn(2, 3, requires_grad=True)
    print(it, trainer.step(x))
