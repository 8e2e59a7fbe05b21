# Source: http://pullrequest.ru/9554451/pytorch-kak-sdelat-opredelennyi-modul-parameters-staticheskim-vremya-obucheniya
"""A Russian mirror of a Stack Overflow question, "PyTorch: how to make a given module's parameters static
during training": the asker freezes layers of a `nn.Sequential` by indexing `list(s.parameters())` and
setting `requires_grad = False`, and notes the edge case of freezing every parameter of the module: the
loss then has no graph and `loss.backward()` raises "element 0 of tensors does not require grad and does
not have a grad_fn". Fix (the answer's own example): freeze only the middle layer (`params[2]`,
`params[3]`), the first layer still trains and receives gradients through the frozen one.
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
            loss.backward()  # expect: GG104
            optimizer.step()
        print(epoch, loss.item())


s = make_model()
params = list(s.parameters())  # .parameters() returns a generator
# edge case: every parameter of the module made static
freeze(params, range(len(params)))
data = [(torch.randn(16, 4), torch.randn(16, 1)) for _ in range(4)]
train(s, data)
