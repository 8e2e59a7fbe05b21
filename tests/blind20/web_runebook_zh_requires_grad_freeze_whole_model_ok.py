# Source: https://runebook.dev/zh/docs/pytorch/generated/torch.nn.module/torch.nn.Module.requires_grad_
"""SimpleNet with only ``fc1`` frozen and an optimizer over the trainable parameters (fixed).

The page's "错误做法" (wrong way) for ``nn.Module.requires_grad_()``: the
whole ``SimpleNet`` (``fc1 -> relu -> fc2``) is frozen with
``model.requires_grad_(False)`` while the optimizer is still built over
``model.parameters()`` and the model is still trained.  With no parameter
requiring grad, the forward pass records no graph, the MSE loss has no
``grad_fn``, and the first ``loss.backward()`` raises "element 0 of tensors
does not require grad and does not have a grad_fn".

Fixed here as the page recommends: only ``fc1`` is frozen
(``model.fc1.requires_grad_(False)``) and the optimizer receives only the
parameters that still require grad.
"""
import torch
import torch.nn as nn

torch.manual_seed(0)


# 假设有一个简单的模型
class SimpleNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(10, 5)
        self.fc2 = nn.Linear(5, 1)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


model = SimpleNet()

# 正确做法:只冻结 fc1,优化器只接收需要梯度的参数
model.fc1.requires_grad_(False)

optimizer = torch.optim.SGD(filter(lambda p: p.requires_grad, model.parameters()), lr=0.01)
criterion = nn.MSELoss()

inputs = torch.randn(64, 10)
targets = torch.randn(64, 1)

for epoch in range(3):
    for i in range(0, 64, 16):
        x, y = inputs[i:i + 16], targets[i:i + 16]
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch}: loss {loss.item():.4f}")
