# Source: https://github.com/AaronComo/LipFD/issues/18
"""LipFD (AaronComo, trainer/trainer.py) trained with --fix_encoder: the loop meant to freeze only
the CLIP encoder sets `p.requires_grad = False` in both branches, so every parameter is frozen,
the loss has no grad_fn, and optimize_parameters() fails at self.loss.backward() ("element 0 of
tensors does not require grad and does not have a grad_fn"; the reporter: "I am pretty sure it is
a typo"). The Trainer is the repository's (with the nn.Module constructor called); a small
LipFD model (a conv encoder standing in for CLIP's image encoder, a region backbone over the lip
crops with max/original region weights, a classifier head), the region-awareness loss and random
audio-visual batches stand in for models/ and the dataset."""
from types import SimpleNamespace

import torch
import torch.nn as nn


class LipFD(nn.Module):
    def __init__(self, dim=8):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv2d(3, dim, 3, stride=2, padding=1), nn.ReLU(),
                                     nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.backbone = nn.Sequential(nn.Conv2d(3, dim, 3, stride=2, padding=1), nn.ReLU(),
                                      nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.region_weight = nn.Linear(2 * dim, 1)
        self.head = nn.Linear(2 * dim, 1)

    def get_features(self, x):
        return self.encoder(x)

    def forward(self, crops, feature):
        parts, weights = [], []
        for scale in crops:  # crops[scale][frame]: (batch, 3, h, w)
            for crop in scale:
                f = torch.cat([self.backbone(crop), feature], dim=1)
                parts.append(f)
                weights.append(torch.sigmoid(self.region_weight(f)))
        weights = torch.cat(weights, dim=1)  # (batch, regions)
        weights_max, _ = weights.max(dim=1)
        weights_org = weights[:, 0]
        fused = sum(w.unsqueeze(1) * p for w, p in zip(weights.unbind(1), parts)) / weights.sum(1, keepdim=True)
        return self.head(fused), weights_max, weights_org


class RALoss(nn.Module):
    """Region awareness: pushes the best region's weight above the original frame's."""
    def forward(self, alphas_max, alphas_org):
        return torch.mean(torch.exp(-(alphas_max - alphas_org) + 1e-2) * 0.5)


def build_model(arch):
    return LipFD()


def get_loss():
    return RALoss()


class Trainer(nn.Module):
    def __init__(self, opt):
        super().__init__()
        self.opt = opt
        self.total_steps = 0
        self.device = torch.device("cpu")
        self.model = build_model(opt.arch)

        if opt.fix_encoder:
            params = []
            for name, p in self.model.named_parameters():
                if name.split(".")[0] in ["encoder"]:
                    p.requires_grad = False
                else:
                    p.requires_grad = False
            params = self.model.parameters()

        if opt.optim == "adam":
            self.optimizer = torch.optim.AdamW(params, lr=opt.lr, betas=(opt.beta1, 0.999),
                                               weight_decay=opt.weight_decay)
        else:
            raise ValueError("optim should be [adam, sgd]")

        self.criterion = get_loss().to(self.device)
        self.criterion1 = nn.BCEWithLogitsLoss()

    def set_input(self, input):
        self.input = input[0].to(self.device)
        self.crops = [[t.to(self.device) for t in sublist] for sublist in input[1]]
        self.label = input[2].to(self.device).float()

    def forward(self):
        self.get_features()
        self.output, self.weights_max, self.weights_org = self.model.forward(self.crops, self.features)
        self.output = self.output.view(-1)
        self.loss = self.criterion(self.weights_max, self.weights_org) + self.criterion1(self.output, self.label)

    def get_loss(self):
        loss = self.loss.data.tolist()
        return loss[0] if isinstance(loss, type(list())) else loss

    def optimize_parameters(self):
        self.optimizer.zero_grad()
        self.loss.backward()  # expect: GG104
        self.optimizer.step()

    def get_features(self):
        self.features = self.model.get_features(self.input).to(self.device)


def random_batch(batch_size=4):
    image = torch.randn(batch_size, 3, 16, 16)
    crops = [[torch.randn(batch_size, 3, 8, 8) for _ in range(2)] for _ in range(2)]
    label = torch.randint(0, 2, (batch_size,))
    return image, crops, label


opt = SimpleNamespace(arch="CLIP:ViT-L/14", fix_encoder=True, optim="adam", lr=2e-5, beta1=0.9, weight_decay=0.0)
model = Trainer(opt)
for epoch in range(2):
    for i in range(2):
        model.total_steps += 1
        model.set_input(random_batch())
        model.forward()
        model.optimize_parameters()
        print(epoch, i, model.get_loss())
