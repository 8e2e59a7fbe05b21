# Source: https://openillumi.com/?p=50862
"""The post's fix for a non-scalar output: pass the gradients argument, here the task weights
dL/dz_i, so the backward of the loss vector computes the weighted multi-task objective."""
import torch
import torch.nn as nn

torch.manual_seed(0)


class MultiTaskNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(8, 16), nn.ReLU())
        self.heads = nn.ModuleDict({"cls": nn.Linear(16, 3), "reg": nn.Linear(16, 1)})

    def forward(self, x):
        h = self.trunk(x)
        return {name: head(h) for name, head in self.heads.items()}


criteria = {"cls": nn.CrossEntropyLoss(), "reg": nn.MSELoss()}
task_weights = {"cls": 1.0, "reg": 0.5}


def task_losses(outputs, targets):
    return torch.stack([criteria[name](outputs[name], targets[name]) for name in outputs])


model = MultiTaskNet()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
weights = torch.tensor([task_weights[name] for name in model.heads])
for step in range(3):
    x = torch.randn(6, 8)
    targets = {"cls": torch.randint(0, 3, (6,)), "reg": torch.randn(6, 1)}
    optimizer.zero_grad()
    z = task_losses(model(x), targets)
    z.backward(weights)
    optimizer.step()
    print(step, z.tolist())
