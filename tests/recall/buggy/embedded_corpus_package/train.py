"""Training loop of the intent classifier."""
import torch.nn.functional as F


def fit(model, optimizer, batches, epochs):
    history = []
    for epoch in range(epochs):
        for x, y in batches:
            loss = F.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()  # expect: GG101
            optimizer.step()
            history.append(loss.item())
    return history
