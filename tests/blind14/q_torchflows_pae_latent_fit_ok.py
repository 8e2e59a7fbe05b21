# Source: https://github.com/davidnabergoj/torchflows/issues/8
"""Fixed twin of q_torchflows_pae_latent_fit_bug.py. The probabilistic autoencoder's latent codes
were computed by `ae.encoder(data)` with grad on, so `flow.fit(latent)` backwarded through the
encoder's graph in every epoch and the second backward raised "Trying to backward through the
graph a second time". The thread ended without a code fix (the maintainer asked for a reproducer);
the right fix, applied here, encodes the data under `torch.no_grad()`: the flow is fitted to fixed
codes and the already trained encoder is not touched. torchflows' Flow/fit and a RealNVP-style
bijection are small stand-ins written in the file.
"""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

# ----------------------------- stand-ins: torchflows -----------------------------


def create_data_loader(x, w, context, label, batch_size, shuffle, event_shape):
    if w is None:
        w = torch.ones(len(x))
    return DataLoader(TensorDataset(x, w), batch_size=batch_size, shuffle=shuffle)


class AffineCoupling(nn.Module):
    def __init__(self, event_shape, hidden=16, flip=False):
        super().__init__()
        d = event_shape[0]
        self.d1, self.flip = d // 2, flip
        self.net = nn.Sequential(nn.Linear(self.d1, hidden), nn.Tanh(), nn.Linear(hidden, 2 * (d - self.d1)))

    def forward(self, x):
        if self.flip:
            x = x.flip(-1)
        a, b = x[:, :self.d1], x[:, self.d1:]
        log_s, t = self.net(a).chunk(2, dim=-1)
        log_s = torch.tanh(log_s)
        z = torch.cat([a, b * torch.exp(log_s) + t], dim=-1)
        if self.flip:
            z = z.flip(-1)
        return z, log_s.sum(-1)


class RealNVP(nn.Module):
    def __init__(self, event_shape, n_layers=4):
        super().__init__()
        self.event_shape = event_shape
        self.layers = nn.ModuleList([AffineCoupling(event_shape, flip=i % 2 == 1) for i in range(n_layers)])

    def forward(self, x, context=None):
        log_det = torch.zeros(x.shape[0])
        for layer in self.layers:
            x, ld = layer(x)
            log_det = log_det + ld
        return x, log_det


class Flow(nn.Module):
    def __init__(self, bijection):
        super().__init__()
        self.event_shape = bijection.event_shape
        self.event_size = bijection.event_shape[0]
        self.bijection = bijection

    def base_log_prob(self, z):
        return torch.distributions.Normal(0.0, 1.0).log_prob(z).sum(-1)

    def log_prob(self, x, context=None):
        z, log_det = self.bijection.forward(x, context=context)
        return self.base_log_prob(z) + log_det

    def regularization(self):
        return 0.0

    def fit(self, x_train, n_epochs=500, lr=0.05, batch_size=None, shuffle=True, w_train=None):
        self.train()
        if batch_size is None:
            batch_size = len(x_train)
        train_loader = create_data_loader(x_train, w_train, None, "training", batch_size=batch_size,
                                          shuffle=shuffle, event_shape=self.event_shape)

        def compute_batch_loss(batch_, reduction=torch.mean):
            batch_x, batch_weights = batch_[:2]
            batch_log_prob = self.log_prob(batch_x)
            batch_loss = -reduction(batch_log_prob * batch_weights) / self.event_size
            return batch_loss

        optimizer = torch.optim.AdamW(self.parameters(), lr=lr)
        for epoch in range(n_epochs):
            for train_batch in train_loader:
                optimizer.zero_grad()
                train_loss = compute_batch_loss(train_batch, reduction=torch.mean)
                train_loss += self.regularization()
                train_loss.backward()
                optimizer.step()
        self.eval()

# ----------------------------- the reporter's probabilistic autoencoder -----------------------------


class Autoencoder(nn.Module):
    def __init__(self, n_in=20, latent_dim=8):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(n_in, 32), nn.ReLU(), nn.Linear(32, latent_dim))
        self.decoder = nn.Sequential(nn.Linear(latent_dim, 32), nn.ReLU(), nn.Linear(32, n_in))

    def forward(self, x):
        z = self.encoder(x)
        return self.decoder(z), z


def train_autoencoder(model, data, epochs=3):
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(epochs):
        recon, _ = model(data)
        loss = ((recon - data) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return model


torch.manual_seed(0)
data = torch.randn(64, 20)
ae = train_autoencoder(Autoencoder(), data)

with torch.no_grad():
    latent = ae.encoder(data)  # latent space of the autoencoder, size latent_dim
flow = Flow(RealNVP(event_shape=(8,)))
flow.fit(latent, n_epochs=3)
print(flow.log_prob(latent[:4]).detach())
