# Source: https://taourl.com/read-2483063.html
"""The article's second fix, the right one here: the forward pass is recomputed at the updated
weights before the second backward (retain_graph=True would differentiate the old weights' graph
after the step changed them)."""
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
        y = self.model(x)
        loss = y.sum()
        loss.backward()
        return loss.item(), self.grad_norm()


trainer = Trainer(torch.nn.Linear(3, 1))
for it in range(2):
    x = torch.randn(2, 3, requires_grad=True)
    print(it, trainer.step(x))
