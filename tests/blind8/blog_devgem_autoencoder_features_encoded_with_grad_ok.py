# Source: https://devgem.io/posts/understanding-pytorch-s-runtimeerror-backward-through-the-graph-a-second-time
"""The post's fix: the autoencoder is a frozen feature extractor, so the features are computed
under `torch.no_grad()` ("This line is crucial"); each slice's loss then reaches only the
classifier's fresh graph."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class AutoEncoder(nn.Module):
    def __init__(self, n_in, n_code):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(n_in, 16), nn.ReLU(), nn.Linear(16, n_code))
        self.decoder = nn.Sequential(nn.Linear(n_code, 16), nn.ReLU(), nn.Linear(16, n_in))

    def forward(self, x):
        code = self.encoder(x)
        return code, F.mse_loss(self.decoder(code), x)


class Classifier(nn.Module):
    def __init__(self, n_code, n_classes):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(n_code, 32), nn.ReLU(), nn.Linear(32, n_classes))

    def forward(self, x, y):
        out = self.net(x)
        loss = F.cross_entropy(out, y)
        accuracy = (out.argmax(dim=1) == y).float().mean()
        return out, loss, accuracy


X_train_tensor = torch.randn(96, 20)
y_train_tensor = torch.randint(0, 3, (96,))

autoencoder = AutoEncoder(20, 8)
autoencoder.eval()
with torch.no_grad():
    X_train_encoded, _ = autoencoder(X_train_tensor)

model = Classifier(8, 3)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
batch_size = 32
max_iters = 2

for iter in range(max_iters):
    start_ix = 0
    loss = None
    while start_ix < len(X_train_encoded):
        end_ix = min(start_ix + batch_size, len(X_train_encoded))
        out, loss, accuracy = model(X_train_encoded[start_ix:end_ix], y_train_tensor[start_ix:end_ix])
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        start_ix = end_ix
    print(iter, loss.item(), accuracy.item())
