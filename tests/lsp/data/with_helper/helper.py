import torch


def fit(w):
    loss = torch.exp(w).sum()
    loss.backward()
    loss.backward()
