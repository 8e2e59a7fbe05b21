# Source: https://github.com/lucidrains/denoising-diffusion-pytorch/issues/109
"""denoising-diffusion-pytorch's Trainer loop (next(self.dl) -> loss = self.model(data) ->
backward -> opt.step()) run on the reporter's own data: "I use a conv1D() to convert my data to
the shape of the network's input, which is out of the training loop". The converted tensor
carries the Conv1d's graph, every batch drawn from it hangs on that graph, and the second
training step's backward raises "Trying to backward through the graph a second time" (the
reporter: fine on the first loss.backward(), the error on the second). The Trainer's loop and
GaussianDiffusion's q_sample / p_losses follow the repository (October 2022) without accelerate,
EMA and sampling; a one-convolution denoiser stands in for the Unet."""
import torch
import torch.nn.functional as F
from torch import nn
from torch.optim import Adam
from torch.utils.data import DataLoader, Dataset


def cycle(dl):
    while True:
        for data in dl:
            yield data


def extract(a, t, x_shape):
    b, *_ = t.shape
    out = a.gather(-1, t)
    return out.reshape(b, *((1,) * (len(x_shape) - 1)))


class Denoiser(nn.Module):
    def __init__(self, channels=3):
        super().__init__()
        self.channels = channels
        self.net = nn.Sequential(nn.Conv2d(channels + 1, 16, 3, padding=1), nn.SiLU(),
                                 nn.Conv2d(16, channels, 3, padding=1))

    def forward(self, x, time):
        t = (time.float() / 100.0).view(-1, 1, 1, 1).expand(-1, 1, *x.shape[-2:])
        return self.net(torch.cat([x, t], dim=1))


class GaussianDiffusion(nn.Module):
    def __init__(self, model, *, image_size, timesteps=100):
        super().__init__()
        self.model = model
        self.channels = model.channels
        self.image_size = image_size
        self.num_timesteps = timesteps
        betas = torch.linspace(1e-4, 0.02, timesteps)
        alphas_cumprod = torch.cumprod(1. - betas, dim=0)
        self.register_buffer('sqrt_alphas_cumprod', torch.sqrt(alphas_cumprod))
        self.register_buffer('sqrt_one_minus_alphas_cumprod', torch.sqrt(1. - alphas_cumprod))

    def q_sample(self, x_start, t, noise=None):
        noise = torch.randn_like(x_start) if noise is None else noise
        return (extract(self.sqrt_alphas_cumprod, t, x_start.shape) * x_start +
                extract(self.sqrt_one_minus_alphas_cumprod, t, x_start.shape) * noise)

    def p_losses(self, x_start, t, noise=None):
        noise = torch.randn_like(x_start) if noise is None else noise
        x = self.q_sample(x_start=x_start, t=t, noise=noise)
        model_out = self.model(x, t)
        return F.l1_loss(model_out, noise)

    def forward(self, img):
        b = img.shape[0]
        t = torch.randint(0, self.num_timesteps, (b,), device=img.device).long()
        img = img * 2 - 1
        return self.p_losses(img, t)


class TensorImages(Dataset):
    def __init__(self, images):
        self.images = images

    def __len__(self):
        return len(self.images)

    def __getitem__(self, index):
        return self.images[index]


class Trainer(object):
    def __init__(self, diffusion_model, dataset, *, train_batch_size=16,
                 gradient_accumulate_every=1, train_lr=1e-4, train_num_steps=100000,
                 adam_betas=(0.9, 0.99)):
        super().__init__()
        self.model = diffusion_model
        self.batch_size = train_batch_size
        self.gradient_accumulate_every = gradient_accumulate_every
        self.train_num_steps = train_num_steps
        self.image_size = diffusion_model.image_size
        self.ds = dataset
        dl = DataLoader(self.ds, batch_size=train_batch_size, shuffle=True)
        self.dl = cycle(dl)
        self.opt = Adam(diffusion_model.parameters(), lr=train_lr, betas=adam_betas)
        self.step = 0

    def train(self):
        while self.step < self.train_num_steps:
            total_loss = 0.
            for _ in range(self.gradient_accumulate_every):
                data = next(self.dl)
                loss = self.model(data)
                loss = loss / self.gradient_accumulate_every
                total_loss += loss.item()
                loss.backward()  # expect: GG101
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
            self.opt.step()
            self.opt.zero_grad()
            self.step += 1
            print(f'loss: {total_loss:.4f}')
        print('training complete')


# the reporter's data: 4-channel signals of length 8, shaped for the network by a Conv1d
signals = torch.rand(32, 4, 8)
to_input = nn.Conv1d(4, 3 * 8, kernel_size=1)
images = torch.sigmoid(to_input(signals)).view(32, 3, 8, 8)

diffusion = GaussianDiffusion(Denoiser(channels=3), image_size=8, timesteps=100)
trainer = Trainer(diffusion, TensorImages(images), train_batch_size=8, train_lr=8e-5,
                  train_num_steps=3)
trainer.train()
