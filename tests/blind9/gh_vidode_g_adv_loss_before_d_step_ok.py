# Source: https://github.com/psh01087/Vid-ODE/issues/6
"""Vid-ODE's main.py train() with the thread's fix: "Train G" runs before "Train D". The
generator's adversarial loss is backwarded while the discriminators still hold the weights it was
computed with; the discriminator loss scores fake.detach(), so the generator step cannot spoil it.
models/gan.py's Discriminator (with its extrapolation rearrange_seq) is kept, narrower; the
ODE-ConvGRU generator VidODE is a small conv encoder, Euler-integrated latent ODE and decoder
with the same compute_all_losses() contract; the KTH clips are random tensors."""
from types import SimpleNamespace

import torch
import torch.nn as nn
import torch.optim as optim


class ConvNormAct(nn.Module):

    def __init__(self, in_ch, out_ch, kernel_size, stride, padding, act_type='relu'):
        super(ConvNormAct, self).__init__()
        layers = []
        layers += [nn.Conv2d(in_ch, out_ch, kernel_size, stride, padding)]
        layers += [nn.InstanceNorm2d(out_ch)]
        if act_type == 'relu':
            layers += [nn.ReLU(inplace=True)]
        elif act_type == 'lrelu':
            layers += [nn.LeakyReLU(0.2)]
        self.main = nn.Sequential(*layers)

    def forward(self, x):
        return self.main(x)


class Discriminator(nn.Module):

    def __init__(self, in_ch, device, seq=False, is_extrap=True):
        super(Discriminator, self).__init__()
        self.device = device
        self.seq = seq
        self.is_extrap = is_extrap
        self.layer_1 = nn.Sequential(
            nn.Conv2d(in_ch, 8, kernel_size=4, stride=2, padding=1, bias=False),
            nn.LeakyReLU(0.2))
        self.layer_2 = ConvNormAct(8, 16, kernel_size=4, stride=2, padding=1, act_type='lrelu')
        self.layer_3 = ConvNormAct(16, 16, kernel_size=4, stride=1, padding=2, act_type='lrelu')
        self.last_conv = nn.Conv2d(16, 8, kernel_size=4, stride=1, padding=2, bias=False)

    def forward(self, x):
        h = self.layer_1(x)
        h = self.layer_2(h)
        h = self.layer_3(h)
        return self.last_conv(h)

    def netD_adv_loss(self, real, fake, input_real):
        if self.seq:
            real, fake = self.rearrange_seq(real, fake, input_real, only_fake=False)
        else:
            b, t, c, h, w = fake.size()
            real = real.contiguous().view(-1, c, h, w)
            fake = fake.contiguous().view(-1, c, h, w)
        pred_fake = self.forward(fake.detach())
        pred_real = self.forward(real)
        real_label = torch.ones_like(pred_real).to(self.device)
        loss_fake = torch.mean((pred_fake) ** 2)
        loss_real = torch.mean((pred_real - real_label) ** 2)
        loss_D = (loss_real + loss_fake) * 0.5
        return loss_D

    def netG_adv_loss(self, fake, input_real):
        b, t, c, h, w = fake.size()
        if self.seq:
            fake = self.rearrange_seq(None, fake, input_real, only_fake=True)
        else:
            fake = fake.contiguous().view(-1, c, h, w)
        pred_fake = self.forward(fake)
        real_label = torch.ones_like(pred_fake).to(self.device)
        loss_real = torch.mean((pred_fake - real_label) ** 2)
        return loss_real

    def rearrange_seq(self, real, fake, input_real, only_fake=True):
        b, t, c, h, w = fake.size()
        fake_seqs = []
        for i in range(t):
            fake_seq = torch.cat([input_real[:, i:, ...], fake[:, :i + 1, ...]], dim=1)
            fake_seqs += [fake_seq]
        fake_seqs = torch.cat(fake_seqs, dim=0).view(b * t, -1, h, w)
        if only_fake:
            return fake_seqs
        real_seqs = []
        for i in range(t):
            real_seq = torch.cat([input_real[:, i:, ...], real[:, :i + 1, ...]], dim=1)
            real_seqs += [real_seq]
        real_seqs = torch.cat(real_seqs, dim=0).view(b * t, -1, h, w)
        return real_seqs, fake_seqs


def create_netD(opt, device):
    seq_len = opt.sample_size // 2
    if opt.extrap:
        seq_len += 1
    netD_img = Discriminator(in_ch=3, device=device, seq=False, is_extrap=opt.extrap).to(device)
    netD_seq = Discriminator(in_ch=3 * (seq_len), device=device, seq=True, is_extrap=opt.extrap).to(device)
    optimizer_netD = optim.Adamax(list(netD_img.parameters()) + list(netD_seq.parameters()), lr=opt.lr)
    return netD_img, netD_seq, optimizer_netD


class VidODE(nn.Module):
    """Encoder -> latent ODE (Euler steps) -> decoder, one frame per predicted time step."""

    def __init__(self, opt, device):
        super(VidODE, self).__init__()
        self.encoder = nn.Sequential(nn.Conv2d(3, opt.init_dim, 3, 2, 1), nn.ReLU())
        self.ode_func = nn.Sequential(nn.Conv2d(opt.init_dim, opt.init_dim, 3, 1, 1), nn.Tanh())
        self.decoder = nn.Sequential(nn.ConvTranspose2d(opt.init_dim, 3, 4, 2, 1), nn.Tanh())

    def compute_all_losses(self, batch_dict):
        observed = batch_dict["observed_data"]
        b, t_in, c, h, w = observed.size()
        z = self.encoder(observed[:, -1])
        frames = []
        for _ in range(batch_dict["data_to_predict"].size(1)):
            z = z + 0.5 * self.ode_func(z)
            frames.append(self.decoder(z))
        pred_y = torch.stack(frames, dim=1)
        loss = torch.mean((pred_y - batch_dict["data_to_predict"]) ** 2)
        return {"loss": loss, "pred_y": pred_y}


def get_next_batch(opt):
    clip = torch.rand(opt.batch_size, opt.sample_size, 3, opt.input_size, opt.input_size) * 2 - 1
    half = opt.sample_size // 2
    return {"observed_data": clip[:, :half], "data_to_predict": clip[:, half:]}


def train(opt, netG, device):
    optimizer_netG = optim.Adamax(netG.parameters(), lr=opt.lr)
    netD_img, netD_seq, optimizer_netD = create_netD(opt, device)
    total_step = 0
    for epoch in range(opt.epoch):
        for it in range(opt.n_train_batches):
            batch_dict = get_next_batch(opt)

            res = netG.compute_all_losses(batch_dict)
            loss_netG = res["loss"]

            # Compute Adversarial Loss
            real = batch_dict["data_to_predict"]
            fake = res["pred_y"]
            input_real = batch_dict["observed_data"]

            loss_netD = opt.lamb_adv * netD_seq.netD_adv_loss(real, fake, input_real)
            loss_netD += opt.lamb_adv * netD_img.netD_adv_loss(real, fake, None)

            loss_adv_netG = opt.lamb_adv * netD_seq.netG_adv_loss(fake, input_real)
            loss_adv_netG += opt.lamb_adv * netD_img.netG_adv_loss(fake, None)
            loss_netG += loss_adv_netG

            # Train G
            optimizer_netG.zero_grad()
            loss_netG.backward()
            optimizer_netG.step()

            # Train D
            optimizer_netD.zero_grad()
            loss_netD.backward()
            optimizer_netD.step()

            print(f"Epoch [{epoch:03d}] Iterations [{(total_step + 1):6d}] Mse [{res['loss'].item():.4f}] "
                  f"Adv_G [{loss_adv_netG.item():.4f}] Adv_D [{loss_netD.item():.4f}]")
            total_step += 1


if __name__ == '__main__':
    opt = SimpleNamespace(batch_size=2, epoch=1, n_train_batches=2, lr=1e-3, sample_size=4, lamb_adv=0.003,
                          input_size=16, init_dim=8, extrap=True, irregular=False)
    device = torch.device("cpu")
    train(opt, VidODE(opt, device), device)
