# Source: https://github.com/neuraloperator/neuraloperator/issues/103
"""Training a neuraloperator FNO on FDTD simulations with 32 input and 32 output channels: the
library's default training loss, LpLoss(d=2, p=2), takes the norm over the two spatial dims and
then reduces only reduce_dims=0, the batch, so with several output channels it returns one loss
per channel, and Trainer.train's loss.backward() raises "grad can be implicitly created only for
scalar outputs" ("No such error when in/out channels both = 1"). The library's LpLoss,
UnitGaussianNormalizer and Trainer.train loop (without wandb, patching and evaluation) are
kept, a two-layer FNO is written here, and random fields (4 channels, 16x16) stand in for the
pickled simulations. As the one backward raises, nothing walks the graph the FNO layer loop
carries from layer to layer: observed GG202."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class LpLoss(object):
    def __init__(self, d=1, p=2, L=2*math.pi, reduce_dims=0, reductions='sum'):
        super().__init__()
        self.d = d
        self.p = p
        if isinstance(reduce_dims, int):
            self.reduce_dims = [reduce_dims]
        else:
            self.reduce_dims = reduce_dims
        if self.reduce_dims is not None:
            if isinstance(reductions, str):
                assert reductions == 'sum' or reductions == 'mean'
                self.reductions = [reductions]*len(self.reduce_dims)
            else:
                self.reductions = reductions
        if isinstance(L, float):
            self.L = [L]*self.d
        else:
            self.L = L

    def reduce_all(self, x):
        for j in range(len(self.reduce_dims)):
            if self.reductions[j] == 'sum':
                x = torch.sum(x, dim=self.reduce_dims[j], keepdim=True)
            else:
                x = torch.mean(x, dim=self.reduce_dims[j], keepdim=True)
        return x

    def rel(self, x, y):
        diff = torch.norm(torch.flatten(x, start_dim=-self.d) - torch.flatten(y, start_dim=-self.d),
                          p=self.p, dim=-1, keepdim=False)
        ynorm = torch.norm(torch.flatten(y, start_dim=-self.d), p=self.p, dim=-1, keepdim=False)
        diff = diff/ynorm
        if self.reduce_dims is not None:
            diff = self.reduce_all(diff).squeeze()
        return diff

    def __call__(self, x, y):
        return self.rel(x, y)


class UnitGaussianNormalizer:
    def __init__(self, x, eps=1e-5, reduce_dim=[0]):
        self.mean = torch.mean(x, reduce_dim, keepdim=True).squeeze(0)
        self.std = torch.std(x, reduce_dim, keepdim=True).squeeze(0)
        self.eps = eps

    def encode(self, x):
        return (x - self.mean) / (self.std + self.eps)

    def decode(self, x):
        return x * (self.std + self.eps) + self.mean

    def to(self, device):
        return self


class TensorDataset(torch.utils.data.Dataset):
    def __init__(self, x, y, transform_x=None, transform_y=None):
        self.x, self.y = x, y

    def __getitem__(self, index):
        return {'x': self.x[index], 'y': self.y[index]}

    def __len__(self):
        return self.x.size(0)


class SpectralConv2d(nn.Module):
    def __init__(self, in_channels, out_channels, modes):
        super().__init__()
        self.modes = modes
        scale = 1 / (in_channels * out_channels)
        self.weight = nn.Parameter(scale * torch.randn(in_channels, out_channels, modes, modes, dtype=torch.cfloat))

    def forward(self, x):
        x_ft = torch.fft.rfft2(x)
        out_ft = torch.einsum("bixy,ioxy->boxy", x_ft[:, :, :self.modes, :self.modes], self.weight)
        out_ft = F.pad(out_ft, (0, x_ft.size(-1) - self.modes, 0, x_ft.size(-2) - self.modes))
        return torch.fft.irfft2(out_ft, s=x.shape[-2:])


class FNO(nn.Module):
    def __init__(self, n_modes, hidden_channels, in_channels, out_channels, n_layers=2):
        super().__init__()
        self.lifting = nn.Conv2d(in_channels, hidden_channels, 1)
        self.convs = nn.ModuleList(SpectralConv2d(hidden_channels, hidden_channels, n_modes[0]) for _ in range(n_layers))
        self.skips = nn.ModuleList(nn.Conv2d(hidden_channels, hidden_channels, 1) for _ in range(n_layers))
        self.projection = nn.Sequential(nn.Conv2d(hidden_channels, 32, 1), nn.GELU(), nn.Conv2d(32, out_channels, 1))

    def forward(self, x):
        x = self.lifting(x)
        for conv, skip in zip(self.convs, self.skips):
            x = F.gelu(conv(x) + skip(x))  # expect: GG202
        return self.projection(x)


class Trainer:
    def __init__(self, model, n_epochs, device=None):
        self.n_epochs = n_epochs
        self.device = device

    def train(self, train_loader, test_loaders, output_encoder, model, optimizer, scheduler,
              regularizer, training_loss=None, eval_losses=None):
        if training_loss is None:
            training_loss = LpLoss(d=2)
        for epoch in range(self.n_epochs):
            model.train()
            train_err = 0.0
            for sample in train_loader:
                x, y = sample['x'], sample['y']
                optimizer.zero_grad(set_to_none=True)
                out = model(x)
                if output_encoder is not None:
                    out = output_encoder.decode(out)
                    y = output_encoder.decode(y)
                loss = training_loss(out.float(), y)
                loss.backward()  # expect: GG105
                optimizer.step()
                train_err += loss.item()
            scheduler.step()


def load_data(n=8, channels=4, size=16):
    return torch.randn(n, channels, size, size), torch.randn(n, channels, size, size)


x_train, y_train = load_data()
encode_output = True
if encode_output:
    reduce_dims = list(range(y_train.ndim))
    output_encoder = UnitGaussianNormalizer(y_train, reduce_dim=reduce_dims)
    y_train = output_encoder.encode(y_train)
else:
    output_encoder = None

train_db = TensorDataset(x_train, y_train)
train_loader = torch.utils.data.DataLoader(train_db, batch_size=4, shuffle=True)

model = FNO(n_modes=(6, 6), hidden_channels=16, in_channels=x_train.shape[1], out_channels=y_train.shape[1])
optimizer = torch.optim.Adam(model.parameters(), lr=8e-3, weight_decay=1e-4)
scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=30)
l2loss = LpLoss(d=2, p=2)

trainer = Trainer(model, n_epochs=1)
trainer.train(train_loader, {}, output_encoder, model, optimizer, scheduler, regularizer=False,
              training_loss=l2loss, eval_losses={'l2': l2loss})
