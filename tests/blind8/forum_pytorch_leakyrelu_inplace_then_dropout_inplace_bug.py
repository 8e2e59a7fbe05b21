# Source: https://discuss.pytorch.org/t/why-inplace-is-by-default-set-to-false-for-nn-leakyrelu/111246
"""The forum thread "Why inplace is by default set to False for nn.LeakyReLU": the poster sees no
reason for `inplace=False` ("LeakyReLU should not have any parameters, so ideally inplace=True
should be default behavior"). The answer shows what it costs: "one of the variables needed for
gradient computation has been modified by an inplace operation: [torch.FloatTensor [1024]], which
is output 0 of LeakyReluBackward1, is at version 2; expected version 1 instead". LeakyReLU run in
place saves its own output, so a later in-place op on that output breaks the backward.
Reconstructed from the thread: a GAN-style discriminator whose 1024-wide hidden layer uses
LeakyReLU and Dropout, both switched to `inplace=True` to save memory."""
import torch
import torch.nn as nn


class Discriminator(nn.Module):
    def __init__(self, n_in):
        super().__init__()
        self.fc1 = nn.Linear(n_in, 1024)
        self.act = nn.LeakyReLU(0.2, inplace=True)
        self.drop = nn.Dropout(0.3, inplace=True)
        self.fc2 = nn.Linear(1024, 1)

    def forward(self, x):
        h = self.act(self.fc1(x))
        h = self.drop(h)
        return self.fc2(h)


netD = Discriminator(n_in=64)
optimizerD = torch.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
criterion = nn.BCEWithLogitsLoss()

for step in range(3):
    real = torch.randn(16, 64) + 1.0
    fake = torch.randn(16, 64)
    x = torch.cat([real, fake])
    labels = torch.cat([torch.ones(16, 1), torch.zeros(16, 1)])
    optimizerD.zero_grad()
    loss = criterion(netD(x), labels)
    loss.backward()  # expect: GG103
    optimizerD.step()
    print(step, loss.item())
