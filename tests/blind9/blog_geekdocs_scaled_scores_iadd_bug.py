# Source: https://geek-docs.com/pytorch/pytorch-questions/518_pytorch_runtimeerror_one_of_the_variables_needed_for_gradient_computation_has_been_modified_by_an_inplace_operation.html
"""The geek-docs article on "RuntimeError: one of the variables needed for gradient computation
has been modified by an inplace operation": its example doubles a tensor that requires grad,
adds 1 to the result in place (`y = x * 2; y += 1`), sums and backwards, and states that the
backward raises; the fix it gives is the out-of-place `y = y + 1`. The same pattern in a
regression model whose forward doubles the linear layer's scores and shifts them in place. In
torch 2.13 nothing here raises: multiplying by the constant 2 saves no tensor, and the linear
layer saves its input and weight, not its output, so the in-place add touches nothing a
backward needs. Labelled with what torch does: clean."""
import torch
import torch.nn as nn


class ScaledRegressor(nn.Module):
    def __init__(self, n_in=4):
        super().__init__()
        self.fc = nn.Linear(n_in, 1)

    def forward(self, x):
        y = self.fc(x) * 2
        y += 1
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
