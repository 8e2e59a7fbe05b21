# Source: https://github.com/pytorch/pytorch/issues/5687
"""The reporter's ResidualBlock (a content-weighted image compression CNN): the left branch ends in
nn.ReLU(inplace=True), and forward adds the shortcut into that branch's output in place,
`out += residual`. The ReLU saved its output for its backward, and `+=` overwrites it. On PyTorch
0.3 this went unnoticed ("Pytorch didn't complain ... the loss goes to hundreds of thousands",
wrong gradients); torch 2.13 checks the saved output's version and the training step's backward
raises "one of the variables needed for gradient computation has been modified by an inplace
operation". ResidualBlock is the reporter's; the rest of ContentWeightedCNN (encoder, importance
map, decoder) is reconstructed small, trained on random 3x16x16 images with an MSE reconstruction
loss and Adam."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class BasicModule(nn.Module):
    def __init__(self):
        super(BasicModule, self).__init__()
        self.model_name = str(type(self))


class ResidualBlock(nn.Module):
    def __init__(self, ch_in, ch_out, shortcut=None):
        super(ResidualBlock, self).__init__()
        self.left = nn.Sequential(
            nn.Conv2d(ch_in, 128, 3, 1, 1),  # ch_in, ch_out, kernel_size, stride, pad
            nn.ReLU(inplace=True),
            nn.Conv2d(128, ch_out, 3, 1, 1),
            nn.ReLU(inplace=True),
        )
        self.right = shortcut

    def forward(self, x):
        out = self.left(x)
        residual = x if self.right is None else self.right(x)
        out += residual
        return F.relu(out, inplace=False)


class ContentWeightedCNN(BasicModule):
    def __init__(self):
        super(ContentWeightedCNN, self).__init__()
        self.model_name = 'ContentWeightedCNN'
        self.encoder = nn.Sequential(
            nn.Conv2d(3, 32, 4, 2, 1),
            nn.ReLU(inplace=True),
            ResidualBlock(32, 32),
            nn.Conv2d(32, 16, 3, 1, 1),
            nn.Sigmoid(),
        )
        self.importance = nn.Sequential(nn.Conv2d(16, 1, 1), nn.Sigmoid())
        self.decoder = nn.Sequential(
            nn.Conv2d(16, 32, 3, 1, 1),
            nn.ReLU(inplace=True),
            ResidualBlock(32, 32),
            nn.ConvTranspose2d(32, 3, 4, 2, 1),
        )

    def forward(self, x):
        code = self.encoder(x)
        imp = self.importance(code)
        rec = self.decoder(code * imp)
        return rec, imp


model = ContentWeightedCNN()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for it in range(3):
    images = torch.rand(2, 3, 16, 16)
    rec, imp = model(images)
    loss = F.mse_loss(rec, images) + 0.01 * imp.mean()
    optimizer.zero_grad()
    loss.backward()  # expect: GG103
    optimizer.step()
    print(it, loss.item())
