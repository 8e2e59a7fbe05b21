# Source: https://github.com/schelotto/Wasserstein-AutoEncoders/issues/2
"""Wasserstein-AutoEncoders' WAE-MMD training with the fix the repository's loop applies (the
thread has no answer): the reconstruction and MMD losses are added and total_loss.backward() walks
the shared encoder graph once before both optimizers step."""
import torch
import torch.nn as nn
from torch.autograd import Variable


class Args:
    batch_size = 8
    epochs = 1
    lr = 1e-3
    dim_h = 8
    n_z = 4
    LAMBDA = 10
    n_channel = 1
    sigma = 1


args = Args()


class Encoder(nn.Module):
    def __init__(self, args):
        super(Encoder, self).__init__()
        self.n_channel = args.n_channel
        self.dim_h = args.dim_h
        self.n_z = args.n_z
        self.main = nn.Sequential(
            nn.Conv2d(self.n_channel, self.dim_h, 4, 2, 1, bias=False),
            nn.ReLU(True),
            nn.Conv2d(self.dim_h, self.dim_h * 2, 4, 2, 1, bias=False),
            nn.BatchNorm2d(self.dim_h * 2),
            nn.ReLU(True),
        )
        self.fc = nn.Linear(self.dim_h * 2 * 4 * 4, self.n_z)

    def forward(self, x):
        x = self.main(x)
        x = x.view(x.size(0), -1)
        return self.fc(x)


class Decoder(nn.Module):
    def __init__(self, args):
        super(Decoder, self).__init__()
        self.n_channel = args.n_channel
        self.dim_h = args.dim_h
        self.n_z = args.n_z
        self.proj = nn.Sequential(nn.Linear(self.n_z, self.dim_h * 2 * 4 * 4), nn.ReLU())
        self.main = nn.Sequential(
            nn.ConvTranspose2d(self.dim_h * 2, self.dim_h, 4, 2, 1),
            nn.BatchNorm2d(self.dim_h),
            nn.ReLU(True),
            nn.ConvTranspose2d(self.dim_h, 1, 4, 2, 1),
            nn.Sigmoid(),
        )

    def forward(self, x):
        x = self.proj(x)
        x = x.view(-1, self.dim_h * 2, 4, 4)
        return self.main(x)


def imq_kernel(X, Y, h_dim):
    batch_size = X.size(0)

    norms_x = X.pow(2).sum(1, keepdim=True)
    prods_x = torch.mm(X, X.t())
    dists_x = norms_x + norms_x.t() - 2 * prods_x

    norms_y = Y.pow(2).sum(1, keepdim=True)
    prods_y = torch.mm(Y, Y.t())
    dists_y = norms_y + norms_y.t() - 2 * prods_y

    dot_prd = torch.mm(X, Y.t())
    dists_c = norms_x + norms_y.t() - 2 * dot_prd

    stats = 0
    for scale in [.1, .2, .5, 1., 2., 5., 10.]:
        C = 2 * h_dim * 1.0 * scale
        res1 = C / (C + dists_x)
        res1 += C / (C + dists_y)
        res1 = (1 - torch.eye(batch_size)) * res1
        res1 = res1.sum() / (batch_size - 1)
        res2 = C / (C + dists_c)
        res2 = res2.sum() * 2. / (batch_size)
        stats += res1 - res2

    return stats


def train_loader(n_batches=2):
    for _ in range(n_batches):
        yield torch.rand(args.batch_size, 1, 16, 16), torch.randint(0, 10, (args.batch_size,))


encoder, decoder = Encoder(args), Decoder(args)
criterion = nn.MSELoss()
encoder.train()
decoder.train()

enc_optim = torch.optim.Adam(encoder.parameters(), lr=args.lr)
dec_optim = torch.optim.Adam(decoder.parameters(), lr=args.lr)

for epoch in range(args.epochs):
    step = 0
    for images, _ in train_loader():
        images = Variable(images)

        enc_optim.zero_grad()
        dec_optim.zero_grad()

        # ======== Train Generator ======== #
        batch_size = images.size()[0]

        z = encoder(images)
        x_recon = decoder(z)

        recon_loss = criterion(x_recon, images)

        # ======== MMD Kernel Loss ======== #
        z_fake = Variable(torch.randn(images.size()[0], args.n_z) * args.sigma)
        z_real = z

        mmd_loss = imq_kernel(z_real, z_fake, h_dim=encoder.n_z)
        mmd_loss = mmd_loss / batch_size
        total_loss = recon_loss + mmd_loss
        total_loss.backward()

        enc_optim.step()
        dec_optim.step()

        step += 1
        print("Epoch: [%d/%d], Step: %d, Reconstruction Loss: %.4f, MMD Loss %.4f" %
              (epoch + 1, args.epochs, step, recon_loss.item(), mmd_loss.item()))
