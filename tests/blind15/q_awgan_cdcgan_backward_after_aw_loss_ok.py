# Source: https://github.com/vasily789/adaptive-weighted-gans/issues/6
"""Fixed twin of q_awgan_cdcgan_backward_after_aw_loss_bug.py. A conditional DCGAN trained with
adaptive-weighted-gans' `aw_method.aw_loss`, which backwards the real and the fake discriminator
losses itself (the fake one without retaining), writes the weighted gradients into `param.grad` and
returns the weighted loss; the reporter's `aw_loss.backward(retain_graph=True)` walked the freed
fake graph. The thread has no answer; the right fix, applied here, drops that backward and steps
`D_opt` on the gradients `aw_loss` set. With nothing walking the real loss's graph a second time,
the `retain_graph=True` on its backward inside `aw_loss` keeps a graph nobody walks, so it is
dropped too (the real and fake batches go through D separately and share no graph). The MNIST
loader, the generator and the discriminator are small stand-ins written in the file.
"""
import numpy as np
import torch
import torch.nn as nn

# ----------------------------- new_loss.py (adaptive-weighted-gans aw_loss.py) -----------------------------


class aw_method():
    def __init__(self, alpha1=0.5, alpha2=0.75, delta=0.05, epsilon=0.05, normalized_aw=True):
        assert alpha1 < alpha2
        self._alpha1 = alpha1
        self._alpha2 = alpha2
        self._delta = delta
        self._epsilon = epsilon
        self._normalized_aw = normalized_aw

    def aw_loss(self, Dloss_real, Dloss_fake, Dis_opt, Dis_Net, real_validity, fake_validity):
        # resetting gradient back to zero
        Dis_opt.zero_grad()

        # computing real batch gradient
        Dloss_real.backward()
        # tensor with real gradients
        grad_real_tensor = [param.grad.clone() for _, param in Dis_Net.named_parameters()]
        grad_real_list = torch.cat([grad.reshape(-1) for grad in grad_real_tensor], dim=0)
        # calculating the norm of the real gradient
        rdotr = torch.dot(grad_real_list, grad_real_list).item() + 1e-4  # 1e-4 added to avoid division by zero
        r_norm = np.sqrt(rdotr)

        # resetting gradient back to zero
        Dis_opt.zero_grad()

        # computing fake batch gradient
        Dloss_fake.backward()  # (retain_graph=True)
        # tensor with real gradients
        grad_fake_tensor = [param.grad.clone() for _, param in Dis_Net.named_parameters()]
        grad_fake_list = torch.cat([grad.reshape(-1) for grad in grad_fake_tensor], dim=0)
        # calculating the norm of the fake gradient
        fdotf = torch.dot(grad_fake_list, grad_fake_list).item() + 1e-4  # 1e-4 added to avoid division by zero
        f_norm = np.sqrt(fdotf)

        # resetting gradient back to zero
        Dis_opt.zero_grad()

        # dot product between real and fake gradients
        rdotf = torch.dot(grad_real_list, grad_fake_list).item()
        fdotr = rdotf

        # Real and Fake scores
        rs = torch.mean(torch.sigmoid(real_validity))
        fs = torch.mean(torch.sigmoid(fake_validity))

        if self._normalized_aw:
            # Implementation of normalized version of aw-method, i.e. Algorithm 1
            if rs < self._alpha1 or rs < (fs - self._delta):
                if rdotf <= 0:
                    w_r = (1 / r_norm) + self._epsilon
                    w_f = (-fdotr / (fdotf * r_norm)) + self._epsilon
                else:
                    w_r = (1 / r_norm) + self._epsilon
                    w_f = self._epsilon
            elif rs > self._alpha2 and rs > (fs - self._delta):
                if rdotf <= 0:
                    w_r = (-rdotf / (rdotr * f_norm)) + self._epsilon
                    w_f = (1 / f_norm) + self._epsilon
                else:
                    w_r = self._epsilon
                    w_f = (1 / f_norm) + self._epsilon
            else:
                w_r = (1 / r_norm) + self._epsilon
                w_f = (1 / f_norm) + self._epsilon
        else:
            w_r = 1 + self._epsilon
            w_f = 1 + self._epsilon

        # calculating aw_loss
        aw_loss = w_r * Dloss_real + w_f * Dloss_fake

        # updating gradient, i.e. getting aw_loss gradient
        for index, (_, param) in enumerate(Dis_Net.named_parameters()):
            param.grad = w_r * grad_real_tensor[index] + w_f * grad_fake_tensor[index]

        return aw_loss

# ----------------------------- the reporter's cDCGAN script -----------------------------


num_epochs = 1
betas = (0.5, 0.999)
lr = 0.0002
batch_size = 8
device = torch.device('cpu')
z_dim = 16  # latent Space
c_dim = 1  # Image Channel
label_dim = 10  # label
image_size = 32
generator_out_linear = 16


class Generator(nn.Module):
    def __init__(self):
        super(Generator, self).__init__()
        self.label_linear = nn.Linear(label_dim, generator_out_linear)
        self.net = nn.Sequential(
            nn.ConvTranspose2d(z_dim + generator_out_linear, 32, 4, 1, 0), nn.BatchNorm2d(32), nn.ReLU(True),
            nn.ConvTranspose2d(32, 16, 4, 2, 1), nn.BatchNorm2d(16), nn.ReLU(True),
            nn.ConvTranspose2d(16, 8, 4, 2, 1), nn.BatchNorm2d(8), nn.ReLU(True),
            nn.ConvTranspose2d(8, c_dim, 4, 2, 1), nn.Tanh())

    def forward(self, noise, label_onehot):
        y = self.label_linear(label_onehot.view(label_onehot.size(0), -1))
        return self.net(torch.cat([noise, y[:, :, None, None]], 1))


class Discriminator(nn.Module):
    def __init__(self):
        super(Discriminator, self).__init__()
        self.net = nn.Sequential(
            nn.Conv2d(c_dim + label_dim, 8, 4, 2, 1), nn.LeakyReLU(0.2, True),
            nn.Conv2d(8, 16, 4, 2, 1), nn.BatchNorm2d(16), nn.LeakyReLU(0.2, True),
            nn.Conv2d(16, 32, 4, 2, 1), nn.BatchNorm2d(32), nn.LeakyReLU(0.2, True),
            nn.Conv2d(32, 1, 4, 1, 0), nn.Sigmoid())

    def forward(self, img, label_onehot):
        fill = label_onehot.expand(-1, -1, img.size(2), img.size(3))
        return self.net(torch.cat([img, fill], 1))


torch.manual_seed(0)
train_loader = [(torch.rand(batch_size, c_dim, image_size, image_size), torch.randint(0, label_dim, (batch_size,)))
                for _ in range(2)]
onehot = torch.zeros(label_dim, label_dim).scatter_(1, torch.arange(label_dim).view(label_dim, 1), 1).view(label_dim, label_dim, 1, 1)

G = Generator().to(device)
D = Discriminator().to(device)
criterion = nn.BCELoss()
G_opt = torch.optim.Adam(G.parameters(), lr=lr, betas=betas)
D_opt = torch.optim.Adam(D.parameters(), lr=lr, betas=betas)
aw = aw_method()

D_loss_list, G_loss_list = [], []
for epoch in range(num_epochs):
    for i, (x_real, y_label) in enumerate(train_loader):
        # (1) Update D network
        D_opt.zero_grad()
        # Train with all-real batch
        x_real = x_real.to(device)
        y_real = torch.ones(batch_size, ).to(device)
        y_label_onehot = onehot[y_label].to(device)
        real_validity = D(x_real, y_label_onehot).squeeze()
        Dloss_real = criterion(real_validity, y_real)

        # Train with all-fake batch
        noise = torch.randn(batch_size, z_dim, 1, 1, device=device)
        noise_label = (torch.rand(batch_size, 1) * label_dim).type(torch.LongTensor).squeeze()
        noise_label_onehot = onehot[noise_label].to(device)
        x_fake = G(noise, noise_label_onehot)
        y_fake = torch.zeros(batch_size, ).to(device)
        fake_validity = D(x_fake, noise_label_onehot).squeeze()
        Dloss_fake = criterion(fake_validity, y_fake)

        # aw_loss
        aw_loss = aw.aw_loss(Dloss_real, Dloss_fake, D_opt, D, real_validity, fake_validity)

        # backward and optimize
        # aw_loss has set the discriminator's gradients
        D_opt.step()

        # (2) Update G network: maximize log(D(G(z)))
        G_opt.zero_grad()
        noise = torch.randn(batch_size, z_dim, 1, 1, device=device)
        noise_label = (torch.rand(batch_size, 1) * label_dim).type(torch.LongTensor).squeeze()
        noise_label_onehot = onehot[noise_label].to(device)
        x_fake = G(noise, noise_label_onehot)
        y_fake_predict = D(x_fake, noise_label_onehot).squeeze()
        g_loss = criterion(y_fake_predict, y_real)
        g_loss.backward()
        G_opt.step()

        D_loss_list.append(aw_loss.item())
        G_loss_list.append(g_loss.item())
print(D_loss_list, G_loss_list)
