# Source: https://github.com/torchgeo/torchgeo/issues/3735
"""Fixed twin (the merged fix, PR #3737). torchgeo LTAE (Lightweight Temporal Attention Encoder, torchgeo/models/ltae.py): training raises
"one of the variables needed for gradient computation has been modified by an inplace operation:
[torch.FloatTensor [128, 32]], which is output 0 of ReluBackward0, is at version 2; expected
version 1" in loss.backward() during Lightning's Trainer.fit().

The MLP head ends with `nn.ReLU(inplace=True)`, whose backward needs its own output, and forward
then applies `self.dropout = nn.Dropout(dropout, inplace=True)` to that output before the final
LayerNorm: in training mode the in-place dropout overwrites the saved ReLU output. The fix (PR
#3737, merged): drop `inplace=True` from the Dropout layers, as in the reference L-TAE
implementation. The model is the library's; the reporter's repro is wrapped in a small
classification module and a Lightning-like fit loop (backward on the loss training_step returns)
with random time series.
"""
import math
from collections.abc import Sequence

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor

torch.manual_seed(0)


class PositionalEncoding(nn.Module):
    def __init__(self, d_model: int, dropout: float = 0.1, T: int = 1000) -> None:
        super().__init__()
        self.dropout = nn.Dropout(p=dropout)
        position = torch.arange(T).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2) * (-math.log(T) / d_model))
        pe = torch.zeros(1, T, d_model)
        pe[0, :, 0::2] = torch.sin(position * div_term)
        pe[0, :, 1::2] = torch.cos(position * div_term)
        self.register_buffer('pe', pe)

    def forward(self, x: Tensor) -> Tensor:
        pe = self.pe[:, : x.size(1)]
        output: Tensor = self.dropout(x + pe)
        return output


class LTAE(nn.Module):
    def __init__(self, in_channels: int = 128, n_head: int = 16, d_k: int = 8,
                 n_neurons: Sequence[int] = (256, 128), dropout: float = 0.2,
                 d_model: int | None = 256, T: int = 1000, len_max_seq: int = 24,
                 positions: Sequence[int] | None = None) -> None:
        super().__init__()
        self.in_channels = in_channels
        self.positions = positions
        self.n_neurons = n_neurons
        self.d_model = d_model if d_model is not None else in_channels
        self.inconv: nn.Sequential | None = None
        if d_model is not None:
            self.inconv = nn.Sequential(
                nn.Conv1d(in_channels, d_model, 1), nn.LayerNorm([d_model, len_max_seq])
            )
        self.pos_encoder = PositionalEncoding(self.d_model, dropout, T)
        self.attention = nn.MultiheadAttention(
            embed_dim=self.d_model, num_heads=n_head, dropout=dropout, batch_first=True
        )
        self.inlayernorm = nn.LayerNorm(self.in_channels)
        self.outlayernorm = nn.LayerNorm(n_neurons[-1])
        assert self.n_neurons[0] == self.d_model
        activation = nn.ReLU(inplace=True)
        layers = []
        for i in range(len(self.n_neurons) - 1):
            layers.extend([
                nn.Linear(self.n_neurons[i], self.n_neurons[i + 1]),
                nn.BatchNorm1d(self.n_neurons[i + 1]),
                activation,
            ])
        self.mlp = nn.Sequential(*layers)
        self.dropout = nn.Dropout(dropout)  # fix (PR #3737): not in place

    def forward(self, x: Tensor) -> Tensor:
        sz_b, seq_len, d = x.shape
        x = self.inlayernorm(x)
        if self.inconv is not None:
            x = self.inconv(x.permute(0, 2, 1)).permute(0, 2, 1)
        x = self.pos_encoder(x)
        attention_output, _ = self.attention(x, x, x)
        mlp_input = attention_output.mean(dim=1)
        output: Tensor = self.outlayernorm(self.dropout(self.mlp(mlp_input)))
        return output


class TimeSeriesClassificationTask(nn.Module):
    """Stand-in LightningModule: LTAE encoder + linear classifier."""
    def __init__(self, num_classes=4):
        super().__init__()
        self.model = LTAE(in_channels=16, d_model=16, n_head=4, n_neurons=(16, 32), len_max_seq=5)
        self.head = nn.Linear(32, num_classes)

    def training_step(self, batch, batch_idx):
        x, y = batch
        y_hat = self.head(self.model(x))
        loss = F.cross_entropy(y_hat, y)
        return loss

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=1e-3)


class Trainer(object):
    """Stand-in for lightning.Trainer.fit: backward on the loss training_step returns."""
    def __init__(self, max_epochs=1):
        self.max_epochs = max_epochs

    def fit(self, model, train_dataloaders):
        optimizer = model.configure_optimizers()
        model.train()
        for epoch in range(self.max_epochs):
            for batch_idx, batch in enumerate(train_dataloaders):
                loss = model.training_step(batch, batch_idx)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                print('epoch', epoch, 'batch', batch_idx, 'loss', loss.item())


train_dataloader = [(torch.randn(8, 5, 16), torch.randint(0, 4, (8,))) for _ in range(2)]
task = TimeSeriesClassificationTask()
trainer = Trainer(max_epochs=1)
trainer.fit(task, train_dataloaders=train_dataloader)
