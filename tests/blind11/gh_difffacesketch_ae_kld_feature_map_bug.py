# Source: https://github.com/puckikk1202/difffacesketch2023/issues/8
"""difffacesketch2023's sketch autoencoder training (train_ae.py with sketch_ae/models/
Combine_AE_dilate.py): the model's KLD computation is commented out, so the second value it
returns is a [1, 64, 64]-like feature map, which train_ae.py adds to the MSE as "kld";
loss.backward() raises "grad can be implicitly created only for scalar outputs". The author's
answer (_ok): when training the VAE, re-enable the KLD so the model returns a scalar KL term.
Sizes shrunk; random sketches stand in for the data set.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Encoder(nn.Module):
    def __init__(self, ch=8, latent=16):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(1, ch, 3, 2, 1), nn.LeakyReLU(0.2),
                                  nn.Conv2d(ch, ch, 3, 2, 1, dilation=1), nn.LeakyReLU(0.2))
        self.fc_mu = nn.Linear(ch * 4 * 4, latent)
        self.fc_var = nn.Linear(ch * 4 * 4, latent)

    def forward(self, x):
        h = self.conv(x).flatten(1)
        return self.fc_mu(h), self.fc_var(h)


class Decoder(nn.Module):
    def __init__(self, ch=8, latent=16):
        super().__init__()
        self.fc = nn.Linear(latent, ch * 4 * 4)
        self.deconv = nn.Sequential(nn.ConvTranspose2d(ch, ch, 4, 2, 1), nn.LeakyReLU(0.2),
                                    nn.ConvTranspose2d(ch, 1, 4, 2, 1), nn.Sigmoid())
        self.ch = ch

    def forward(self, z):
        return self.deconv(self.fc(z).view(-1, self.ch, 4, 4))


class Combine_AE(nn.Module):
    def __init__(self, parts=("eye", "mouth")):
        super().__init__()
        self.encoders = nn.ModuleDict({p: Encoder() for p in parts})
        self.decoders = nn.ModuleDict({p: Decoder() for p in parts})

    def reparameterize(self, mu, logvar):
        std = torch.exp(0.5 * logvar)
        return mu + torch.randn_like(std) * std

    def forward(self, sketches):
        outputs = {}
        for part, x in sketches.items():
            mu, logvar = self.encoders[part](x)
            z = self.reparameterize(mu, logvar)
            recon = self.decoders[part](z)
            # kld = torch.mean(-0.5 * torch.sum(1 + logvar - mu ** 2 - logvar.exp(), dim=1), dim=0)
            feature = recon[0]
            outputs[part] = (recon, feature)
        return outputs


def train_ae(model, optimizer, loader, epochs=2):
    criterion = nn.MSELoss()
    for epoch in range(epochs):
        for sketches in loader:
            outputs = model(sketches)
            loss = 0
            for part, out in outputs.items():
                mse = criterion(out[0], sketches[part])
                kld = out[1]
                loss = loss + mse + 1e-4 * kld  # expect: GG202
            optimizer.zero_grad()
            loss.backward()  # expect: GG105
            optimizer.step()


model = Combine_AE()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
loader = [{"eye": torch.rand(2, 1, 16, 16), "mouth": torch.rand(2, 1, 16, 16)} for _ in range(2)]
train_ae(model, optimizer, loader)
