# Source: https://github.com/neuraloperator/neuraloperator/pull/291
"""neuraloperator's training loop (Trainer.train_one_epoch) with a Fourier neural operator whose
output has several channels, trained on neuralop.losses.LpLoss(d=2, p=2) as the examples build
it. LpLoss reduces over `reduce_dims`, which defaults to 0 (the batch) only, so with two output
channels the relative L2 loss is a vector of two per-channel values and the trainer's
loss.backward() raises "grad can be implicitly created only for scalar outputs" (the pull
request proposed loss.sum().backward(); the maintainers answered that the loss must be told to
reduce the channel dimension too). The FNO is a small 2-D one (lifting, one spectral convolution
with a skip, projection) and the PDE data random fields."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class LpLoss(object):
    def __init__(self, d=1, p=2, L=2 * math.pi, reduce_dims=0, reductions='sum'):
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
                self.reductions = [reductions] * len(self.reduce_dims)
            else:
                self.reductions = reductions
        self.L = [L] * self.d if isinstance(L, float) else L

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
        diff = diff / ynorm
        if self.reduce_dims is not None:
            diff = self.reduce_all(diff).squeeze()
        return diff

    def __call__(self, y_pred, y, **kwargs):
        return self.rel(y_pred, y)


class SpectralConv2d(nn.Module):
    def __init__(self, in_channels, out_channels, n_modes):
        super().__init__()
        self.n_modes = n_modes
        scale = 1 / (in_channels * out_channels)
        self.weight = nn.Parameter(scale * torch.randn(in_channels, out_channels, n_modes, n_modes,
                                                       dtype=torch.cfloat))

    def forward(self, x):
        batchsize, _, height, width = x.shape
        x_ft = torch.fft.rfft2(x, norm='forward')
        out_ft = torch.zeros(batchsize, self.weight.shape[1], height, width // 2 + 1,
                             dtype=torch.cfloat, device=x.device)
        m = self.n_modes
        out_ft[:, :, :m, :m] = torch.einsum('bixy,ioxy->boxy', x_ft[:, :, :m, :m], self.weight)
        return torch.fft.irfft2(out_ft, s=(height, width), norm='forward')


class FNO(nn.Module):
    def __init__(self, n_modes=(4, 4), hidden_channels=8, in_channels=3, out_channels=2, n_layers=2):
        super().__init__()
        self.lifting = nn.Conv2d(in_channels, hidden_channels, 1)
        self.convs = nn.ModuleList(SpectralConv2d(hidden_channels, hidden_channels, n_modes[0])
                                   for _ in range(n_layers))
        self.skips = nn.ModuleList(nn.Conv2d(hidden_channels, hidden_channels, 1) for _ in range(n_layers))
        self.projection = nn.Sequential(nn.Conv2d(hidden_channels, 16, 1), nn.GELU(),
                                        nn.Conv2d(16, out_channels, 1))

    def forward(self, x, **kwargs):
        x = self.lifting(x)
        for conv, skip in zip(self.convs, self.skips):
            x = F.gelu(conv(x) + skip(x))
        return self.projection(x)


class Trainer:
    def __init__(self, model, n_epochs):
        self.model = model
        self.n_epochs = n_epochs

    def train(self, train_loader, optimizer, scheduler, training_loss):
        for epoch in range(self.n_epochs):
            self.model.train()
            train_err = 0.0
            for idx, sample in enumerate(train_loader):
                optimizer.zero_grad(set_to_none=True)
                out = self.model(**sample)
                loss = training_loss(out, **sample)
                loss.backward()  # expect: GG105
                optimizer.step()
                train_err += loss.item()
            scheduler.step()
            print(epoch, train_err / len(train_loader))


train_loader = [{'x': torch.randn(4, 3, 16, 16), 'y': torch.randn(4, 2, 16, 16)} for _ in range(2)]
model = FNO(n_modes=(4, 4), hidden_channels=8, in_channels=3, out_channels=2, n_layers=1)
optimizer = torch.optim.Adam(model.parameters(), lr=8e-3, weight_decay=1e-4)
scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=30)
l2loss = LpLoss(d=2, p=2)
trainer = Trainer(model=model, n_epochs=2)
trainer.train(train_loader=train_loader, optimizer=optimizer, scheduler=scheduler, training_loss=l2loss)
