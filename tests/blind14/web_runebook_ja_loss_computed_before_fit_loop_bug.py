# Source: https://runebook.dev/ja/docs/pytorch/generated/torch.autograd.backward
"""The Japanese troubleshooting page for torch.autograd.backward: after a backward the graph is freed,
so calling backward again on the same graph raises "Trying to backward through the graph a second
time"; its example model is `torch.nn.Linear(10, 1)` with an MSE loss. Here a small fitting
routine computes the prediction and loss once, before its loop, and each iteration backwards that
same loss and steps: the second iteration raises. Fix from the page: compute a new loss from a new
forward pass in every iteration (its `optimizer.zero_grad()` alone would not help).
"""
import torch
import torch.nn.functional as F


def make_problem(n=32):
    input_data = torch.randn(n, 10)
    target = input_data @ torch.randn(10, 1) + 0.1 * torch.randn(n, 1)
    return input_data, target


def fit(model, input_data, target, steps=5, lr=0.01):
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    output = model(input_data)
    loss = F.mse_loss(output, target)
    history = []
    for _ in range(steps):
        optimizer.zero_grad()
        loss.backward()  # expect: GG101
        optimizer.step()
        history.append(loss.item())
    return history


model = torch.nn.Linear(10, 1)
print(fit(model, *make_problem()))
