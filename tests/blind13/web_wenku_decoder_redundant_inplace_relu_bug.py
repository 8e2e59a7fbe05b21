# Source: https://wenku.csdn.net/answer/pg29y942xq
"""The wenku answer on "one of the variables needed for gradient computation has been modified by
an inplace operation": in-place functions such as `F.relu(output, inplace=True)` overwrite tensors
the graph still needs, and should be written out of place. Here a small 1-d conv autoencoder's
decoder stage ends in an `nn.ReLU()` block, and the decoder's forward applies
`F.relu(output, inplace=True)` once more to the block's output, which ReLU saved for its
backward; `loss.backward()` raises. Fix from the answer: `output = F.relu(output)`.
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
        output = F.relu(output, inplace=True)
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
    loss.backward()  # expect: GG103
    opt.step()
    print(epoch, loss.item())
