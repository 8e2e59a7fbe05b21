# Source: https://jishuzhan.net/article/1722447953278275585
"""The jishuzhan.net post "Element 0 of tensors does not require grad and does not have a grad_fn"
gives two causes: a tensor separated from the graph with `.detach()` and then used in the
computation that is backwarded, and tensors never given `requires_grad`. A training loop of the
first kind: the predictions are detached when they are stored for the epoch's metrics, and that
detached tensor is also what the loss is computed from, so `loss.backward()` raises."""
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.Sequential(nn.Linear(5, 16), nn.ReLU(), nn.Linear(16, 1))

    def forward(self, x):
        return self.layers(x)


model = Net()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
criterion = nn.MSELoss()
X, y = torch.randn(80, 5), torch.randn(80, 1)

for epoch in range(2):
    epoch_preds = []
    for i in range(0, 80, 20):
        preds = model(X[i:i + 20]).detach()
        epoch_preds.append(preds)
        loss = criterion(preds, y[i:i + 20])
        optimizer.zero_grad()
        loss.backward()  # expect: GG104
        optimizer.step()
    mae = (torch.cat(epoch_preds) - y).abs().mean()
    print(epoch, mae.item())
