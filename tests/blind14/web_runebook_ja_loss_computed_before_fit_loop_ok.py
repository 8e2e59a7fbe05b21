# Source: https://runebook.dev/ja/docs/pytorch/generated/torch.autograd.backward
"""The fitting routine with the page's fix: each iteration runs a new forward pass and computes a new
loss, so each backward walks a fresh graph.
"""
import torch
import torch.nn.functional as F


def make_problem(n=32):
    input_data = torch.randn(n, 10)
    target = input_data @ torch.randn(10, 1) + 0.1 * torch.randn(n, 1)
    return input_data, target


def fit(model, input_data, target, steps=5, lr=0.01):
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    history = []
    for _ in range(steps):
        optimizer.zero_grad()
        output = model(input_data)
        loss = F.mse_loss(output, target)
        loss.backward()
        optimizer.step()
        history.append(loss.item())
    return history


model = torch.nn.Linear(10, 1)
print(fit(model, *make_problem()))
