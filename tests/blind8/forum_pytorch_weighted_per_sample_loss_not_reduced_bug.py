# Source: https://discuss.pytorch.org/t/grad-can-be-implicitly-created-only-for-scalar-outputs/116234/2
"""The forum thread "Grad can be implicitly created only for scalar outputs". The answer: the error
is raised when `.backward()` is called on a tensor with more than one element; either pass the
gradient (`.backward(gradient=torch.ones_like(loss))`) or reduce the loss first
(`loss.mean().backward()`). The stored thread keeps only the answer; reconstructed as the usual
way a loss stays unreduced: a regression model trained with per-sample weights, the criterion
built with `reduction='none'` so that each sample's loss can be weighted, and the weighted
vector backwarded as it is."""
import torch
import torch.nn as nn


class Regressor(nn.Module):
    def __init__(self, n_in):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(n_in, 32), nn.ReLU(), nn.Linear(32, 1))

    def forward(self, x):
        return self.net(x).squeeze(1)


model = Regressor(n_in=6)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
criterion = nn.MSELoss(reduction='none')

X, y = torch.randn(64, 6), torch.randn(64)
sample_weight = torch.rand(64) + 0.5

for epoch in range(2):
    for i in range(0, 64, 16):
        pred = model(X[i:i + 16])
        loss = criterion(pred, y[i:i + 16]) * sample_weight[i:i + 16]
        optimizer.zero_grad()
        loss.backward()  # expect: GG105
        optimizer.step()
    print(epoch)
