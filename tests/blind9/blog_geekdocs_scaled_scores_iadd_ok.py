# Source: https://geek-docs.com/pytorch/pytorch-questions/518_pytorch_runtimeerror_one_of_the_variables_needed_for_gradient_computation_has_been_modified_by_an_inplace_operation.html
"""The article's fix, the out-of-place `y = y + 1` (the buggy twin already runs under torch
2.13; this twin is the article's recommended form)."""
import torch
import torch.nn as nn


class ScaledRegressor(nn.Module):
    def __init__(self, n_in=4):
        super().__init__()
        self.fc = nn.Linear(n_in, 1)

    def forward(self, x):
        y = self.fc(x) * 2
        y = y + 1
        return y


model = ScaledRegressor()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
for step in range(3):
    x, target = torch.randn(8, 4), torch.randn(8, 1)
    optimizer.zero_grad()
    z = torch.sum((model(x) - target) ** 2)
    z.backward()
    optimizer.step()
    print(step, z.item())
