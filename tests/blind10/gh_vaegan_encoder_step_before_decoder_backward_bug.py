# Source: https://github.com/ry85/VAE-GAN/issues/1
"""VAE-GAN's main.py training step as it was when the issue was opened ("Code broken in
backward"): loss_encoder.backward(retain_graph=True) and optimizer_encoder.step(), then
loss_decoder.backward(retain_graph=True) through x_tilde, whose graph reaches back into the
encoder whose weights the step just changed in place: torch raises the in-place error. The
VaeGan network (encoder, decoder, discriminator with a feature layer) and its losses follow the
repository, smaller; CelebA is random images. The encoder-first order is reconstructed from the
reordered loop posted in the thread. Fix (that comment's): run all three backwards first, zeroing
the grads the next loss must not see, and step the three optimizers after them."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Encoder(nn.Module):
    def __init__(self, z_size=8):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(3, 8, 4, 2, 1), nn.BatchNorm2d(8), nn.ReLU(),
                                  nn.Conv2d(8, 16, 4, 2, 1), nn.BatchNorm2d(16), nn.ReLU())
        self.fc = nn.Sequential(nn.Linear(16 * 4 * 4, 32), nn.BatchNorm1d(32), nn.ReLU())
        self.l_mu = nn.Linear(32, z_size)
        self.l_var = nn.Linear(32, z_size)

    def forward(self, ten):
        ten = self.conv(ten)
        ten = self.fc(ten.view(len(ten), -1))
        return self.l_mu(ten), self.l_var(ten)


class Decoder(nn.Module):
    def __init__(self, z_size=8):
        super().__init__()
        self.fc = nn.Sequential(nn.Linear(z_size, 16 * 4 * 4), nn.BatchNorm1d(16 * 4 * 4), nn.ReLU())
        self.conv = nn.Sequential(nn.ConvTranspose2d(16, 8, 4, 2, 1), nn.BatchNorm2d(8), nn.ReLU(),
                                  nn.ConvTranspose2d(8, 3, 4, 2, 1), nn.Tanh())

    def forward(self, ten):
        ten = self.fc(ten)
        return self.conv(ten.view(len(ten), 16, 4, 4))


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(3, 8, 4, 2, 1), nn.ReLU(),
                                  nn.Conv2d(8, 16, 4, 2, 1), nn.BatchNorm2d(16), nn.ReLU())
        self.fc = nn.Sequential(nn.Linear(16 * 4 * 4, 32), nn.ReLU(), nn.Linear(32, 1))

    def forward(self, ten, mode="REC"):
        layer = self.conv(ten)
        if mode == "REC":
            return layer.view(len(layer), -1)
        return torch.sigmoid(self.fc(layer.view(len(layer), -1)))


class VaeGan(nn.Module):
    def __init__(self, z_size=8):
        super().__init__()
        self.z_size = z_size
        self.encoder = Encoder(z_size)
        self.decoder = Decoder(z_size)
        self.discriminator = Discriminator()

    def forward(self, ten):
        mus, log_variances = self.encoder(ten)
        variances = torch.exp(log_variances * 0.5)
        ten_from_normal = torch.randn(len(ten), self.z_size)
        ten_encoded = ten_from_normal * variances + mus
        ten_rec = self.decoder(ten_encoded)
        ten_from_normal = torch.randn(len(ten), self.z_size)
        ten_sampled = self.decoder(ten_from_normal)
        ten_all = torch.cat((ten, ten_rec, ten_sampled), 0)
        ten_layer = self.discriminator(ten_all, "REC")
        ten_class = self.discriminator(ten_all, "GAN")
        return ten_rec, ten_class, ten_layer, mus, log_variances

    @staticmethod
    def loss(ten_original, ten_predict, layer_original, layer_predicted, labels_original,
             labels_sampled, mus, variances):
        nle = 0.5 * (layer_original - layer_predicted) ** 2
        kl = -0.5 * torch.sum(-variances.exp() - torch.pow(mus, 2) + variances + 1, 1)
        bce_dis_original = -torch.log(labels_original + 1e-3)
        bce_dis_sampled = -torch.log(1 - labels_sampled + 1e-3)
        return nle, kl, bce_dis_original, bce_dis_sampled


def train(net, batches, lambda_mse=1e-3, equilibrium=0.68, margin=0.35):
    optimizer_encoder = torch.optim.RMSprop(net.encoder.parameters(), lr=3e-4)
    optimizer_decoder = torch.optim.RMSprop(net.decoder.parameters(), lr=3e-4)
    optimizer_discriminator = torch.optim.RMSprop(net.discriminator.parameters(), lr=3e-4)
    for data_batch in batches:
        net.train()
        batch_size = len(data_batch)
        x_tilde, disc_class, disc_layer, mus, log_variances = net(data_batch)
        disc_layer_original = disc_layer[:batch_size]
        disc_layer_predicted = disc_layer[batch_size:-batch_size]
        disc_class_original = disc_class[:batch_size]
        disc_class_sampled = disc_class[-batch_size:]
        nle_value, kl_value, bce_dis_original_value, bce_dis_sampled_value = VaeGan.loss(
            data_batch, x_tilde, disc_layer_original, disc_layer_predicted,
            disc_class_original, disc_class_sampled, mus, log_variances)

        loss_encoder = torch.sum(kl_value) + torch.sum(nle_value)
        loss_discriminator = torch.sum(bce_dis_original_value) + torch.sum(bce_dis_sampled_value)
        loss_decoder = torch.sum(lambda_mse * nle_value) - (1.0 - lambda_mse) * loss_discriminator

        train_dis = True
        train_dec = True
        if torch.mean(bce_dis_original_value).item() < equilibrium - margin:
            train_dis = False
        if torch.mean(bce_dis_original_value).item() > equilibrium + margin:
            train_dec = False
        if train_dec is False and train_dis is False:
            train_dis = True
            train_dec = True

        net.zero_grad()
        # encoder
        loss_encoder.backward(retain_graph=True)
        optimizer_encoder.step()
        net.zero_grad()
        # decoder
        if train_dec:
            loss_decoder.backward(retain_graph=True)  # expect: GG103
            optimizer_decoder.step()
            net.discriminator.zero_grad()
        # discriminator
        if train_dis:
            loss_discriminator.backward()
            optimizer_discriminator.step()


if __name__ == "__main__":
    torch.manual_seed(0)
    net = VaeGan(z_size=8)
    train(net, [torch.rand(4, 3, 16, 16) * 2 - 1 for _ in range(2)])
