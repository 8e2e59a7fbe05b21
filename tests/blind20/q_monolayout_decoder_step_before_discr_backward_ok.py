# Source: https://github.com/manila95/monolayout/pull/10
"""MonoLayout (manila95/monolayout), train.py before PR #10 ("Changed order of backward and step,
to fix runtime error"; the error was reported in issue #6).

`Trainer.run_epoch` runs encoder + decoder to get `outputs["topview"]`, feeds it (not detached)
to the patch discriminator, and once `epoch > discr_train_epoch` does
`loss_G.backward(retain_graph=True)`, `self.model_optimizer.step()` (Adam over encoder and
decoder), then `loss_D.backward()`. `loss_D` contains `criterion_d(fake_pred, self.fake)`, whose
graph goes back through the decoder and encoder; their convolutions saved the weights that Adam
has just updated in place, so `loss_D.backward()` raises "one of the variables needed for gradient
computation has been modified by an inplace operation".

Fix (the right one, in the _ok twin): train the discriminator on `outputs["topview"].detach()`.
PR #10 instead moved `self.model_optimizer.step()` after `loss_D.backward()`, which runs, but then
the generator step also applies the gradient of the discriminator loss that `loss_D.backward()`
accumulated into the encoder and decoder.

Stand-ins: a small conv encoder in place of the ResNet-18 encoder, random images / layouts in
place of the KITTI dataset, CPU, tiny sizes, no checkpoint saving or validation; the Decoder,
Discriminator, Trainer and loss code keep the repository's structure.
"""
import argparse
from collections import OrderedDict

import numpy as np

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.autograd import Variable
from torch.utils.data import DataLoader, Dataset


def get_args():
    parser = argparse.ArgumentParser(description="MonoLayout options")
    parser.add_argument("--height", type=int, default=64)
    parser.add_argument("--width", type=int, default=64)
    parser.add_argument("--type", type=str, default="static")
    parser.add_argument("--batch_size", type=int, default=2)
    parser.add_argument("--lr", type=float, default=1e-5)
    parser.add_argument("--lr_D", type=float, default=1e-5)
    parser.add_argument("--scheduler_step_size", type=int, default=5)
    parser.add_argument("--static_weight", type=float, default=5.)
    parser.add_argument("--dynamic_weight", type=float, default=15.)
    parser.add_argument("--occ_map_size", type=int, default=32)
    parser.add_argument("--num_epochs", type=int, default=3)
    parser.add_argument("--lambda_D", type=float, default=0.01)
    parser.add_argument("--discr_train_epoch", type=int, default=0)
    return parser.parse_args([])


# ---- monolayout/model.py ----
class Conv3x3(nn.Module):
    def __init__(self, in_channels, out_channels, use_refl=True):
        super(Conv3x3, self).__init__()
        if use_refl:
            self.pad = nn.ReflectionPad2d(1)
        else:
            self.pad = nn.ZeroPad2d(1)
        self.conv = nn.Conv2d(int(in_channels), int(out_channels), 3)

    def forward(self, x):
        out = self.pad(x)
        out = self.conv(out)
        return out


def upsample(x):
    return F.interpolate(x, scale_factor=2, mode="nearest")


class ResnetEncoder(nn.Module):
    """Stand-in for the ResNet-18 feature pyramid (stride 16 here)."""
    def __init__(self, num_layers, pretrained):
        super(ResnetEncoder, self).__init__()
        self.num_ch_enc = np.array([8, 8, 16, 16, 32])
        chans = [3, 8, 8, 16, 32]
        self.layers = nn.ModuleList([
            nn.Sequential(nn.Conv2d(chans[i], chans[i + 1], 3, 2, 1), nn.ReLU(inplace=True))
            for i in range(4)])

    def forward(self, x):
        features = []
        for layer in self.layers:
            x = layer(x)
            features.append(x)
        return features


class Encoder(nn.Module):
    def __init__(self, num_layers, img_ht, img_wt, pretrained=True):
        super(Encoder, self).__init__()
        self.resnet_encoder = ResnetEncoder(num_layers, pretrained)
        num_ch_enc = self.resnet_encoder.num_ch_enc
        self.conv1 = Conv3x3(num_ch_enc[-1], 128)
        self.conv2 = Conv3x3(128, 128)
        self.pool = nn.MaxPool2d(2)

    def forward(self, x):
        batch_size, c, h, w = x.shape
        x = self.resnet_encoder(x)[-1]
        x = self.pool(self.conv1(x))
        x = self.conv2(x)
        x = self.pool(x)
        return x


class Decoder(nn.Module):
    def __init__(self, num_ch_enc):
        super(Decoder, self).__init__()
        self.num_output_channels = 2
        self.num_ch_enc = num_ch_enc
        self.num_ch_dec = np.array([16, 32, 64, 128, 256]) // 4
        self.convs = OrderedDict()
        for i in range(4, -1, -1):
            num_ch_in = 128 if i == 4 else self.num_ch_dec[i + 1]
            num_ch_out = self.num_ch_dec[i]
            self.convs[("upconv", i, 0)] = nn.Conv2d(num_ch_in, num_ch_out, 3, 1, 1)
            self.convs[("norm", i, 0)] = nn.BatchNorm2d(num_ch_out)
            self.convs[("relu", i, 0)] = nn.ReLU(True)
            self.convs[("upconv", i, 1)] = nn.Conv2d(num_ch_out, num_ch_out, 3, 1, 1)
            self.convs[("norm", i, 1)] = nn.BatchNorm2d(num_ch_out)
        self.convs["topview"] = Conv3x3(self.num_ch_dec[0], self.num_output_channels)
        self.dropout = nn.Dropout3d(0.2)
        self.decoder = nn.ModuleList(list(self.convs.values()))

    def forward(self, x, is_training=True):
        for i in range(4, -1, -1):
            x = self.convs[("upconv", i, 0)](x)
            x = self.convs[("norm", i, 0)](x)
            x = self.convs[("relu", i, 0)](x)
            x = upsample(x)
            x = self.convs[("upconv", i, 1)](x)
            x = self.convs[("norm", i, 1)](x)
        if is_training:
            x = self.convs["topview"](x)
        else:
            softmax = nn.Softmax2d()
            x = softmax(self.convs["topview"](x))
        return x


class Discriminator(nn.Module):
    def __init__(self):
        super(Discriminator, self).__init__()
        self.main = nn.Sequential(
            nn.Conv2d(2, 8, 3, 2, 1, 1, bias=False),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(8, 16, 3, 2, 1, 1, bias=False),
            nn.BatchNorm2d(16),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(16, 32, 3, 2, 1, 1, bias=False),
            nn.BatchNorm2d(32),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(32, 8, 3, 2, 1, 1, bias=False),
            nn.BatchNorm2d(8),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(8, 1, 3, 1, 1, bias=False),
            nn.Sigmoid()
        )

    def forward(self, x):
        return self.main(x)


class RandomLayouts(Dataset):
    """Stand-in for monolayout.KITTIOdometry: image, GT layout and an OSM layout for the discriminator."""
    def __init__(self, opt, n=4):
        g = torch.Generator().manual_seed(0)
        self.items = []
        for _ in range(n):
            static = (torch.rand(1, opt.occ_map_size, opt.occ_map_size, generator=g) > 0.5).float()
            discr = (torch.rand(1, opt.occ_map_size, opt.occ_map_size, generator=g) > 0.5).float()
            self.items.append({"color": torch.rand(3, opt.height, opt.width, generator=g),
                               "static": static,
                               "discr": torch.cat([1 - discr, discr], 0)})

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return dict(self.items[i])


# ---- train.py ----
class Trainer:
    def __init__(self):
        self.opt = get_args()
        self.models = {}
        self.weight = {}
        self.weight["static"] = self.opt.static_weight
        self.weight["dynamic"] = self.opt.dynamic_weight
        self.device = "cpu"
        self.criterion_d = nn.BCEWithLogitsLoss()
        self.parameters_to_train = []
        self.parameters_to_train_D = []

        self.models["encoder"] = Encoder(18, self.opt.height, self.opt.width, True)
        self.models["decoder"] = Decoder(self.models["encoder"].resnet_encoder.num_ch_enc)
        self.models["discriminator"] = Discriminator()

        for key in self.models.keys():
            self.models[key].to(self.device)
            if "discr" in key:
                self.parameters_to_train_D += list(self.models[key].parameters())
            else:
                self.parameters_to_train += list(self.models[key].parameters())

        self.model_optimizer = optim.Adam(self.parameters_to_train, self.opt.lr)
        self.model_lr_scheduler = optim.lr_scheduler.StepLR(
            self.model_optimizer, self.opt.scheduler_step_size, 0.1)

        self.model_optimizer_D = optim.Adam(self.parameters_to_train_D, self.opt.lr)
        self.model_lr_scheduler_D = optim.lr_scheduler.StepLR(
            self.model_optimizer_D, self.opt.scheduler_step_size, 0.1)

        self.patch = (1, self.opt.occ_map_size // 2 ** 4, self.opt.occ_map_size // 2 ** 4)

        self.valid = Variable(torch.Tensor(np.ones((self.opt.batch_size, *self.patch))),
                              requires_grad=False).float()
        self.fake = Variable(torch.Tensor(np.zeros((self.opt.batch_size, *self.patch))),
                             requires_grad=False).float()

        train_dataset = RandomLayouts(self.opt)
        self.train_loader = DataLoader(train_dataset, self.opt.batch_size, False, drop_last=True)

    def train(self):
        for self.epoch in range(self.opt.num_epochs):
            loss = self.run_epoch()
            print("Epoch: %d | Loss: %.4f | Discriminator Loss: %.4f" %
                  (self.epoch, loss["loss"], loss["loss_discr"]))

    def process_batch(self, inputs, validation=False):
        outputs = {}
        for key, inpt in inputs.items():
            inputs[key] = inpt.to(self.device)

        features = self.models["encoder"](inputs["color"])
        outputs["topview"] = self.models["decoder"](features)
        if validation:
            return outputs
        losses = self.compute_losses(inputs, outputs)
        losses["loss_discr"] = torch.zeros(1)

        return outputs, losses

    def run_epoch(self):
        self.model_optimizer.step()
        self.model_optimizer_D.step()
        loss = {}
        loss["loss"], loss["loss_discr"] = 0.0, 0.0
        for batch_idx, inputs in enumerate(self.train_loader):
            outputs, losses = self.process_batch(inputs)
            self.model_optimizer.zero_grad()
            fake_pred = self.models["discriminator"](outputs["topview"])
            # the discriminator loss must not reach the encoder / decoder
            fake_pred_D = self.models["discriminator"](outputs["topview"].detach())
            real_pred = self.models["discriminator"](inputs["discr"].float())
            loss_GAN = self.criterion_d(fake_pred, self.valid)
            loss_D = self.criterion_d(
                fake_pred_D, self.fake) + self.criterion_d(real_pred, self.valid)
            loss_G = self.opt.lambda_D * loss_GAN + losses["loss"]

            # Train Discriminator
            if self.epoch > self.opt.discr_train_epoch:
                loss_G.backward()
                self.model_optimizer.step()
                self.model_optimizer_D.zero_grad()
                loss_D.backward()
                self.model_optimizer_D.step()
            else:
                losses["loss"].backward()
                self.model_optimizer.step()

            loss["loss"] += losses["loss"].item()
            loss["loss_discr"] += loss_D.item()
        loss["loss"] /= len(self.train_loader)
        loss["loss_discr"] /= len(self.train_loader)
        return loss

    def compute_losses(self, inputs, outputs):
        losses = {}
        losses["loss"] = self.compute_topview_loss(
            outputs["topview"], inputs[self.opt.type], self.weight[self.opt.type])
        return losses

    def compute_topview_loss(self, outputs, true_top_view, weight):
        generated_top_view = outputs
        true_top_view = torch.squeeze(true_top_view.long())
        loss = nn.CrossEntropyLoss(weight=torch.Tensor([1., weight]))
        output = loss(generated_top_view, true_top_view)
        return output.mean()


if __name__ == "__main__":
    torch.manual_seed(0)
    trainer = Trainer()
    trainer.train()
