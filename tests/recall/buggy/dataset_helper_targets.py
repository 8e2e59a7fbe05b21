"""A helper builds a toy dataset by running a reference MLP on random inputs; the reference is a
plain module, so its outputs keep their graph and every batch slices the same graph."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def make_dataset(reference, n=32, dim=4):
    inputs = torch.randn(n, dim)
    targets = reference(inputs).tanh()
    return inputs, targets


def iterate(inputs, targets, batch_size=8):
    for start in range(0, len(inputs), batch_size):
        yield inputs[start:start + batch_size], targets[start:start + batch_size]


def train(model, inputs, targets, epochs=2):
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(epochs):
        for xb, yb in iterate(inputs, targets):
            loss = F.mse_loss(model(xb), yb)
            opt.zero_grad()
            loss.backward()  # expect: GG101
            opt.step()


reference = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
student = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))
train(student, *make_dataset(reference))
