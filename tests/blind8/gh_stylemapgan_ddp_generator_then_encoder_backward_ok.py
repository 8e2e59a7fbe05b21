# Source: https://github.com/naver-ai/StyleMapGAN/issues/16
"""StyleMapGAN's training step with the reporter's change: g_loss and the weighted w_rec_loss are
summed and backwarded once, so the outputs DDP joins are walked in a single backward; the
generator and encoder steps follow it."""
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn, optim
from torch.nn.parallel import DistributedDataParallel as DDP


class Args:
    batch_per_gpu = 2
    latent_channel_size = 8
    latent_spatial_size = 4
    lr = 0.002
    lambda_adv_loss = 1.0
    lambda_w_rec_loss = 1.0
    lambda_d_loss = 1.0
    lambda_indomainGAN_D_loss = 1.0
    iter = 2


def gather_grad(params, world_size):
    for param in params:
        if param.grad is not None:
            dist.all_reduce(param.grad.data, op=dist.ReduceOp.SUM)
            param.grad.data.div_(world_size)


def requires_grad(model, flag=True):
    for p in model.parameters():
        p.requires_grad = flag


def d_logistic_loss(real_pred, fake_pred):
    return F.softplus(-real_pred).mean() + F.softplus(fake_pred).mean()


def g_nonsaturating_loss(fake_pred):
    return F.softplus(-fake_pred).mean()


def make_noise(batch, latent_channel_size, device):
    return torch.randn(batch, latent_channel_size, device=device)


class Generator(nn.Module):
    """Mapping network to a spatial stylecode, then a decoder from the stylecode to the image."""

    def __init__(self, latent_channel_size, latent_spatial_size):
        super().__init__()
        self.c, self.s = latent_channel_size, latent_spatial_size
        self.mapping = nn.Sequential(nn.Linear(self.c, 32), nn.LeakyReLU(0.2),
                                     nn.Linear(32, self.c * self.s * self.s))
        self.decoder = nn.Sequential(nn.ConvTranspose2d(self.c, 8, 4, 2, 1), nn.LeakyReLU(0.2),
                                     nn.Conv2d(8, 3, 3, padding=1), nn.Tanh())

    def forward(self, z, return_stylecode=False, input_is_stylecode=False):
        stylecode = z if input_is_stylecode else self.mapping(z).view(-1, self.c, self.s, self.s)
        image = self.decoder(stylecode)
        return image, stylecode if return_stylecode else None


class Encoder(nn.Module):
    def __init__(self, latent_channel_size):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.LeakyReLU(0.2),
                                 nn.Conv2d(8, latent_channel_size, 4, 2, 1))

    def forward(self, image):
        return self.net(image)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.LeakyReLU(0.2), nn.Flatten(),
                                 nn.Linear(8 * 4 * 4, 1))

    def forward(self, image):
        return self.net(image)


class DDPModel(nn.Module):
    def __init__(self, device, args):
        super(DDPModel, self).__init__()
        self.generator = Generator(args.latent_channel_size, args.latent_spatial_size)
        self.discriminator = Discriminator()
        self.encoder = Encoder(args.latent_channel_size)
        self.mse_loss = nn.MSELoss()
        self.device = device
        self.args = args

    def forward(self, real_img, mode):
        if mode == "G":
            z = make_noise(self.args.batch_per_gpu, self.args.latent_channel_size, self.device)
            fake_img, stylecode = self.generator(z, return_stylecode=True)
            fake_pred = self.discriminator(fake_img)
            adv_loss = g_nonsaturating_loss(fake_pred)
            fake_img = fake_img.detach()
            stylecode = stylecode.detach()
            fake_stylecode = self.encoder(fake_img)
            w_rec_loss = self.mse_loss(stylecode, fake_stylecode)
            return adv_loss, w_rec_loss, stylecode

        elif mode == "D":
            with torch.no_grad():
                z = make_noise(self.args.batch_per_gpu, self.args.latent_channel_size, self.device)
                fake_img, _ = self.generator(z)
                fake_stylecode = self.encoder(real_img)
                fake_img_from_E, _ = self.generator(fake_stylecode, input_is_stylecode=True)
            real_pred = self.discriminator(real_img)
            fake_pred = self.discriminator(fake_img)
            d_loss = d_logistic_loss(real_pred, fake_pred)
            fake_pred_from_E = self.discriminator(fake_img_from_E)
            indomainGAN_D_loss = F.softplus(fake_pred_from_E).mean()
            return d_loss, indomainGAN_D_loss, real_pred.mean(), fake_pred.mean()


def ddp_main(rank, world_size, args):
    model = DDPModel(device="cpu", args=args)
    model = DDP(model, find_unused_parameters=True)
    model.train()

    g_module = model.module.generator
    g_optim = optim.Adam(g_module.parameters(), lr=args.lr, betas=(0.0, 0.99))
    d_optim = optim.Adam(model.module.discriminator.parameters(), lr=args.lr, betas=(0.0, 0.99))
    e_optim = optim.Adam(model.module.encoder.parameters(), lr=args.lr, betas=(0.0, 0.99))

    requires_grad(model.module.discriminator, False)
    for i in range(args.iter):
        real_img = torch.rand(args.batch_per_gpu, 3, 8, 8) * 2 - 1

        adv_loss, w_rec_loss, stylecode = model(None, "G")
        adv_loss = adv_loss.mean()

        g_loss = adv_loss * args.lambda_adv_loss
        g_loss_val = g_loss.item()

        w_rec_loss = w_rec_loss.mean()
        g_w_rec_loss = g_loss + w_rec_loss * args.lambda_w_rec_loss

        g_optim.zero_grad()
        e_optim.zero_grad()
        g_w_rec_loss.backward()
        gather_grad(g_module.parameters(), world_size)  # Explicitly synchronize Generator parameters.
        g_optim.step()
        e_optim.step()

        requires_grad(model.module.discriminator, True)
        # D adv
        d_loss, indomainGAN_D_loss, real_score, fake_score = model(real_img, "D")
        d_optim.zero_grad()
        (d_loss.mean() * args.lambda_d_loss
         + indomainGAN_D_loss.mean() * args.lambda_indomainGAN_D_loss).backward()
        d_optim.step()
        requires_grad(model.module.discriminator, False)
        print(i, g_loss_val, d_loss.item())


dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
try:
    ddp_main(0, 1, Args())
finally:
    dist.destroy_process_group()
