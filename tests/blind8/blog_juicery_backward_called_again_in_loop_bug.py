# Source: https://ohmygoodnessjuicery.co.uk/post/trying-to-understand-py-torch-runtime-error-trying-to
"""The post "Trying to understand PyTorch RuntimeError: Trying to backward through the graph a
second time": a small model (`MyModel`, one Linear layer) trained with SGD on random data, whose
training loop calls `loss.backward()`, `optimizer.step()` and then `loss.backward()` once more in
the same iteration. The second call walks the graph the first one freed. The post's program, as
written there."""
import torch


class MyModel(torch.nn.Module):
    def __init__(self):
        super(MyModel, self).__init__()
        self.linear = torch.nn.Linear(10, 1)

    def forward(self, x):
        return self.linear(x)


model = MyModel()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)

x = torch.randn(10, 10)
y = torch.randn(10, 1)

for epoch in range(10):
    output = model(x)
    loss = torch.nn.functional.mse_loss(output, y)

    loss.backward()
    optimizer.step()

    loss.backward()  # expect: GG101
