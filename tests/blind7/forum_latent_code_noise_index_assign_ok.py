# Source: https://discuss.pytorch.org/t/write-to-data-instead-runtimeerror-a-leaf-variable-that-requires-grad-has-been-used-in-an-in-place-operation/41049
"""The fix for the thread: a manual change to an optimized leaf is not part of the model and must
not be recorded, so it is made under `torch.no_grad()` (the supported form of the poster's
`z.data[...] = ...`): the noise goes into z in place, z stays a leaf, and the next step optimizes
the perturbed code."""
import torch
import torch.nn as nn
import torch.optim as optim


class ShapeDecoder(nn.Module):
    def __init__(self, code_dim, n_points):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(code_dim, 32), nn.ReLU(), nn.Linear(32, n_points * 3))
        self.n_points = n_points

    def forward(self, z):
        return self.net(z).view(-1, self.n_points, 3)


class ShapeFitter:
    def __init__(self, code_dim=16, n_points=64, lr_shape=1e-2):
        self.lr_shape = lr_shape
        self.decoder = ShapeDecoder(code_dim, n_points)
        for p in self.decoder.parameters():
            p.requires_grad_(False)
        self.target = torch.randn(1, n_points, 3)
        self.code_dim = code_dim

    def fit(self, epochs):
        z = torch.zeros(self.code_dim, requires_grad=True)
        my_adam = optim.Adam([z], lr=self.lr_shape)
        some_indices = torch.tensor([0, 3, 5])
        for epoch in range(epochs):
            my_adam.zero_grad()
            loss = ((self.decoder(z.unsqueeze(0)) - self.target) ** 2).mean()
            loss.backward()
            my_adam.step()
            my_noise_tensor = 0.01 * torch.randn(len(some_indices))
            with torch.no_grad():
                z[some_indices] = z[some_indices] + my_noise_tensor
        return z, loss.item()


z, final_loss = ShapeFitter().fit(epochs=5)
print(final_loss)
