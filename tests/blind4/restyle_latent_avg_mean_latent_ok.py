# Source: https://github.com/yuval-alaluf/restyle-encoder/issues/15
"""ReStyle training with the fix merged for the issue ("Resolves #15"): the average latent
estimated from the mapping network is detached, `self.net.decoder.mean_latent(n)[0].detach()`, so
it is a constant offset for every batch's first refinement step and each backward walks only that
step's graph."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Generator(nn.Module):
    def __init__(self, style_dim=16, n_latent=4, size=8):
        super().__init__()
        self.style_dim, self.n_latent, self.size = style_dim, n_latent, size
        self.style = nn.Sequential(nn.Linear(style_dim, style_dim), nn.LeakyReLU(0.2),
                                   nn.Linear(style_dim, style_dim))
        self.synthesis = nn.Linear(n_latent * style_dim, 3 * size * size)

    def mean_latent(self, n_latent):
        latent_in = torch.randn(n_latent, self.style_dim)
        latent = self.style(latent_in).mean(0, keepdim=True)
        return latent

    def forward(self, styles, input_is_latent=False, randomize_noise=True, return_latents=False):
        latent = styles[0]
        if not input_is_latent:
            latent = self.style(latent)
        if latent.dim() == 2:
            latent = latent.unsqueeze(1).repeat(1, self.n_latent, 1)
        image = torch.tanh(self.synthesis(latent.flatten(1))).view(-1, 3, self.size, self.size)
        if return_latents:
            return image, latent
        return image, None


class Encoder(nn.Module):
    def __init__(self, style_dim=16, n_latent=4):
        super().__init__()
        self.n_latent, self.style_dim = n_latent, style_dim
        self.body = nn.Sequential(nn.Conv2d(6, 8, 3, padding=1), nn.PReLU(), nn.AdaptiveAvgPool2d(2))
        self.head = nn.Linear(8 * 4, n_latent * style_dim)

    def forward(self, x):
        return self.head(self.body(x).flatten(1)).view(-1, self.n_latent, self.style_dim)


class pSp(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = Encoder()
        self.decoder = Generator()
        self.latent_avg = None  # the converted checkpoint has no 'latent_avg'

    def forward(self, x, latent=None, input_code=False, randomize_noise=True,
                return_latents=False, average_code=False):
        if input_code:
            codes = x
        else:
            codes = self.encoder(x)
            # residual step
            if x.shape[1] == 6 and latent is not None:
                # learn error with respect to previous iteration
                codes = codes + latent
            else:
                # first iteration is with respect to the avg latent code
                codes = codes + self.latent_avg.repeat(codes.shape[0], 1, 1)

        if average_code:
            input_is_latent = True
        else:
            input_is_latent = not input_code

        images, result_latent = self.decoder([codes], input_is_latent=input_is_latent,
                                             randomize_noise=randomize_noise,
                                             return_latents=return_latents)
        if return_latents:
            return images, result_latent
        return images


class Coach:
    def __init__(self, n_iters_per_batch=3, max_steps=3):
        self.n_iters_per_batch = n_iters_per_batch
        self.max_steps = max_steps
        self.global_step = 0
        self.net = pSp()

        # Estimate latent_avg via dense sampling if latent_avg is not available
        if self.net.latent_avg is None:
            self.net.latent_avg = self.net.decoder.mean_latent(int(1e3))[0].detach()

        # get the image corresponding to the latent average
        self.avg_image = self.net(self.net.latent_avg.unsqueeze(0), input_code=True,
                                  randomize_noise=False, return_latents=False, average_code=True)[0]
        self.avg_image = self.avg_image.float().detach()

        self.optimizer = torch.optim.Adam(self.net.encoder.parameters(), lr=1e-3)
        self.train_dataloader = [(torch.rand(2, 3, 8, 8) * 2 - 1, torch.rand(2, 3, 8, 8) * 2 - 1)
                                 for _ in range(3)]

    def calc_loss(self, x, y, y_hat, latent):
        loss = F.mse_loss(y_hat, y)
        return loss, {'loss_l2': float(loss), 'loss': float(loss)}, None

    def perform_train_iteration_on_batch(self, x, y):
        y_hat, latent = None, None
        loss_dict = None
        for iter in range(self.n_iters_per_batch):
            if iter == 0:
                avg_image_for_batch = self.avg_image.unsqueeze(0).repeat(x.shape[0], 1, 1, 1)
                x_input = torch.cat([x, avg_image_for_batch], dim=1)
                y_hat, latent = self.net.forward(x_input, latent=None, return_latents=True)
            else:
                y_hat_clone = y_hat.clone().detach().requires_grad_(True)
                latent_clone = latent.clone().detach().requires_grad_(True)
                x_input = torch.cat([x, y_hat_clone], dim=1)
                y_hat, latent = self.net.forward(x_input, latent=latent_clone, return_latents=True)

            loss, loss_dict, id_logs = self.calc_loss(x, y, y_hat, latent)
            loss.backward()
        return y_hat, loss_dict

    def train(self):
        self.net.train()
        while self.global_step < self.max_steps:
            for batch_idx, batch in enumerate(self.train_dataloader):
                self.optimizer.zero_grad()
                x, y = batch
                y_hats, loss_dict = self.perform_train_iteration_on_batch(x, y)
                self.optimizer.step()
                print(self.global_step, loss_dict)
                if self.global_step == self.max_steps:
                    print('OMG, finished training!')
                    break
                self.global_step += 1


Coach().train()
