# Source: https://wenku.csdn.net/answer/pg29y942xq
"""The conv autoencoder with the answer's fix: the decoder applies `F.relu(output)` out of place,
so the block's ReLU output saved for the backward is not overwritten.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


def conv_block(c_in, c_out):
    return nn.Sequential(nn.Conv1d(c_in, c_out, 3, padding=1), nn.BatchNorm1d(c_out), nn.ReLU())


class Decoder(nn.Module):
    def __init__(self, c_lat, c_out):
        super().__init__()
        self.block = conv_block(c_lat, 8)
        self.out = nn.Conv1d(8, c_out, 1)

    def forward(self, z):
        output = self.block(z)
        output = F.relu(output)
        return self.out(output)


class AutoEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(conv_block(2, 8), nn.Conv1d(8, 4, 3, padding=1))
        self.decoder = Decoder(4, 2)

    def forward(self, x):
        return self.decoder(self.encoder(x))


model = AutoEncoder()
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
x = torch.randn(6, 2, 20)
for epoch in range(2):
    opt.zero_grad()
    loss = F.mse_loss(model(x), x)
    loss.backward()
    opt.step()
    print(epoch, loss.item())
