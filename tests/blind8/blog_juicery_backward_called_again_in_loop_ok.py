# Source: https://ohmygoodnessjuicery.co.uk/post/trying-to-understand-py-torch-runtime-error-trying-to
"""The post's fix: one `loss.backward()` per forward pass. The gradients are also cleared with
`optimizer.zero_grad()` at the start of each iteration, so every step applies only that
iteration's gradient."""
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
    optimizer.zero_grad()
    output = model(x)
    loss = torch.nn.functional.mse_loss(output, y)

    loss.backward()
    optimizer.step()
