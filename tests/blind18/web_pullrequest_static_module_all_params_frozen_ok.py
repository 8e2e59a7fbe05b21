# Source: http://pullrequest.ru/9554451/pytorch-kak-sdelat-opredelennyi-modul-parameters-staticheskim-vremya-obucheniya
"""A Russian mirror of a Stack Overflow question, "PyTorch: how to make a given module's parameters static
during training": the asker freezes layers of a `nn.Sequential` by indexing `list(s.parameters())` and
setting `requires_grad = False`; freezing every parameter left the loss without a graph. Fixed as the
answer's own example: only the middle layer is frozen (`params[2]`, `params[3]`); the loss keeps a graph
and the first and last layers train, the first receiving its gradient through the frozen layer.
Three linear layers on random regression data, CPU.
"""
import torch
import torch.nn as nn


def make_model():
    return nn.Sequential(
        nn.Linear(4, 8),
        nn.ReLU(),
        nn.Linear(8, 8),
        nn.ReLU(),
        nn.Linear(8, 1),
    )


def freeze(params, indices):
    for i in indices:
        params[i].requires_grad = False


def train(s, data, epochs=3):
    optimizer = torch.optim.SGD(s.parameters(), lr=0.01)
    loss_fn = nn.MSELoss()
    for epoch in range(epochs):
        for x, y in data:
            optimizer.zero_grad()
            loss = loss_fn(s(x), y)
            loss.backward()
            optimizer.step()
        print(epoch, loss.item())


s = make_model()
params = list(s.parameters())  # .parameters() returns a generator
# Each linear layer has 2 parameters (.weight and .bias),
# skipping the first layer's parameters (indices 0, 1): only the middle layer is static
freeze(params, [2, 3])
data = [(torch.randn(16, 4), torch.randn(16, 1)) for _ in range(4)]
train(s, data)
