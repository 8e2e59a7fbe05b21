# Source: https://github.com/Jakaria08/EESRGAN/issues/14
"""EESRGAN (ESRGAN + edge-enhancement net + Faster R-CNN, trained end to end), run with torch
1.6: ESRGAN_EESN_FRCNN_Model.optimize_parameters backwards the generator losses with
retain_graph=True and steps optimizer_G, updates the discriminator, then feeds `self.final_SR`
(the generator's output from before its step) to the detector and backwards the detection
losses through the generator: "one of the variables needed for gradient computation has been
modified by an inplace operation" at `losses.backward()` (the report: a [3, 64, 3, 3] conv
weight of the generator). The maintainer's answer was to use torch 1.1/1.2. The RRDB generator,
EESN, discriminator, VGG feature net, Faster R-CNN, kornia.laplacian and the config are small
stand-ins written here; the data are random.
"""
from collections import OrderedDict
from types import SimpleNamespace

import torch
import torch.nn as nn
import torch.nn.functional as F


def laplacian(x, kernel_size=3):
    """Stand-in for kornia.laplacian."""
    k = torch.tensor([[1., 1., 1.], [1., -8., 1.], [1., 1., 1.]]).expand(x.shape[1], 1, 3, 3)
    return F.conv2d(F.pad(x, (1, 1, 1, 1), mode='reflect'), k, groups=x.shape[1])


class ESRGAN_EESN(nn.Module):
    """Stand-in generator: a small RRDB-like trunk, x2 upsampling, and the edge-enhancement net."""
    def __init__(self, nf=16):
        super().__init__()
        self.conv_first = nn.Conv2d(3, nf, 3, 1, 1)
        self.trunk = nn.Sequential(nn.Conv2d(nf, nf, 3, 1, 1), nn.LeakyReLU(0.2), nn.Conv2d(nf, nf, 3, 1, 1))
        self.upconv = nn.Conv2d(nf, nf, 3, 1, 1)
        self.conv_last = nn.Conv2d(nf, 3, 3, 1, 1)
        self.eesn = nn.Sequential(nn.Conv2d(3, nf, 3, 1, 1), nn.LeakyReLU(0.2), nn.Conv2d(nf, 3, 3, 1, 1))

    def forward(self, x):
        fea = self.conv_first(x)
        fea = fea + self.trunk(fea)
        fea = F.leaky_relu(self.upconv(F.interpolate(fea, scale_factor=2, mode='nearest')), 0.2)
        fake_H = self.conv_last(fea)
        x_lap = laplacian(fake_H, 3)
        x_learned_lap_fake = self.eesn(x_lap)
        final_SR = fake_H + x_learned_lap_fake - x_lap
        return fake_H, final_SR, x_learned_lap_fake, x_lap


class Discriminator(nn.Module):
    def __init__(self, nf=16):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, nf, 3, 2, 1), nn.LeakyReLU(0.2),
                                      nn.Conv2d(nf, nf, 3, 2, 1), nn.LeakyReLU(0.2))
        self.classifier = nn.Linear(nf * 4 * 4, 1)

    def forward(self, x):
        return self.classifier(self.features(x).flatten(1))


class FasterRCNNStandIn(nn.Module):
    """Stand-in for torchvision's fasterrcnn in training mode: list of images -> dict of losses."""
    def __init__(self, num_classes=2):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.cls_score = nn.Linear(8, num_classes)
        self.bbox_pred = nn.Linear(8, 4)

    def forward(self, images, targets):
        feats = self.backbone(torch.stack(images))
        labels = torch.stack([t["labels"][0] for t in targets])
        boxes = torch.stack([t["boxes"][0] for t in targets])
        return {"loss_classifier": F.cross_entropy(self.cls_score(feats), labels),
                "loss_box_reg": F.smooth_l1_loss(self.bbox_pred(feats), boxes)}


class GANLoss(nn.Module):
    def __init__(self, gan_type, real_label_val=1.0, fake_label_val=0.0):
        super().__init__()
        self.loss = nn.BCEWithLogitsLoss()
        self.real_label_val, self.fake_label_val = real_label_val, fake_label_val

    def forward(self, input, target_is_real):
        target = torch.full_like(input, self.real_label_val if target_is_real else self.fake_label_val)
        return self.loss(input, target)


class CharbonnierLoss(nn.Module):
    def __init__(self, eps=1e-6):
        super().__init__()
        self.eps = eps

    def forward(self, x, y):
        return torch.sum(torch.sqrt((x - y) ** 2 + self.eps))


def reduce_dict(input_dict):
    return input_dict  # single process


class ESRGAN_EESN_FRCNN_Model:
    def __init__(self, config):
        self.configT = config.train
        self.device = torch.device("cpu")
        self.netG = ESRGAN_EESN()
        self.netD = Discriminator()
        self.netF = nn.Sequential(nn.Conv2d(3, 8, 3, 1, 1), nn.ReLU())  # VGG feature stand-in
        for p in self.netF.parameters():
            p.requires_grad = False
        self.netFRCNN = FasterRCNNStandIn()
        self.cri_pix = nn.L1Loss()
        self.l_pix_w = 1e-2
        self.cri_fea = nn.L1Loss()
        self.l_fea_w = 1
        self.cri_gan = GANLoss(self.configT['gan_type'])
        self.l_gan_w = 5e-3
        self.cri_charbonnier = CharbonnierLoss()
        self.D_update_ratio = 1
        self.D_init_iters = 0
        optim_params = [v for k, v in self.netG.named_parameters() if v.requires_grad]
        self.optimizer_G = torch.optim.Adam(optim_params, lr=1e-4, betas=(0.9, 0.99))
        self.optimizer_D = torch.optim.Adam(self.netD.parameters(), lr=1e-4, betas=(0.9, 0.99))
        FRCNN_params = [p for p in self.netFRCNN.parameters() if p.requires_grad]
        self.optimizer_FRCNN = torch.optim.SGD(FRCNN_params, lr=0.005, momentum=0.9, weight_decay=0.0005)
        self.log_dict = OrderedDict()

    def feed_data(self, image, targets):
        self.var_L = image['image_lq'].to(self.device)
        self.var_H = image['image'].to(self.device)
        input_ref = image['ref'] if 'ref' in image else image['image']
        self.var_ref = input_ref.to(self.device)
        self.targets = [{k: v.to(self.device) for k, v in t.items()} for t in targets]

    def optimize_parameters(self, step):
        # Generator
        for p in self.netG.parameters():
            p.requires_grad = True
        for p in self.netD.parameters():
            p.requires_grad = False
        self.optimizer_G.zero_grad()
        self.fake_H, self.final_SR, self.x_learned_lap_fake, _ = self.netG(self.var_L)

        l_g_total = 0
        if step % self.D_update_ratio == 0 and step > self.D_init_iters:
            if self.cri_pix:  # pixel loss
                l_g_pix = self.l_pix_w * self.cri_pix(self.fake_H, self.var_H)
                l_g_total += l_g_pix
            if self.cri_fea:  # feature loss
                real_fea = self.netF(self.var_H).detach()
                fake_fea = self.netF(self.fake_H)
                l_g_fea = self.l_fea_w * self.cri_fea(fake_fea, real_fea)
                l_g_total += l_g_fea

            pred_g_fake = self.netD(self.fake_H)
            if self.configT['gan_type'] == 'gan':
                l_g_gan = self.l_gan_w * self.cri_gan(pred_g_fake, True)
            elif self.configT['gan_type'] == 'ragan':
                pred_d_real = self.netD(self.var_ref).detach()
                l_g_gan = self.l_gan_w * (
                    self.cri_gan(pred_d_real - torch.mean(pred_g_fake), False) +
                    self.cri_gan(pred_g_fake - torch.mean(pred_d_real), True)) / 2
            l_g_total += l_g_gan
            # EESN calculate loss
            self.lap_HR = laplacian(self.var_H, 3)
            if self.cri_charbonnier:  # charbonnier pixel loss HR and SR
                l_e_charbonnier = 5 * (self.cri_charbonnier(self.final_SR, self.var_H)
                                       + self.cri_charbonnier(self.x_learned_lap_fake, self.lap_HR))
            l_g_total += l_e_charbonnier

            l_g_total.backward(retain_graph=True)
            self.optimizer_G.step()

        # descriminator
        for p in self.netD.parameters():
            p.requires_grad = True
        self.optimizer_D.zero_grad()
        pred_d_real = self.netD(self.var_ref)
        pred_d_fake = self.netD(self.fake_H.detach())
        l_d_real = self.cri_gan(pred_d_real - torch.mean(pred_d_fake), True)
        l_d_fake = self.cri_gan(pred_d_fake - torch.mean(pred_d_real), False)
        l_d_total = (l_d_real + l_d_fake) / 2
        l_d_total.backward()
        self.optimizer_D.step()

        for p in self.netD.parameters():
            p.requires_grad = False
        # Run FRCNN
        self.optimizer_FRCNN.zero_grad()
        self.intermediate_img = self.final_SR
        img_count = self.intermediate_img.size()[0]
        self.intermediate_img = [self.intermediate_img[i] for i in range(img_count)]
        loss_dict = self.netFRCNN(self.intermediate_img, self.targets)
        losses = sum(loss for loss in loss_dict.values())
        loss_dict_reduced = reduce_dict(loss_dict)
        losses_reduced = sum(loss for loss in loss_dict_reduced.values())
        loss_value = losses_reduced.item()

        losses.backward()  # expect: GG103
        self.optimizer_FRCNN.step()

        self.log_dict['l_d_real'] = l_d_real.item()
        self.log_dict['l_d_fake'] = l_d_fake.item()
        self.log_dict['FRCNN_loss'] = loss_value


def train_loader(n=2, b=2):
    for _ in range(n):
        hr = torch.rand(b, 3, 16, 16)
        image = {'image_lq': F.interpolate(hr, scale_factor=0.5, mode='bilinear', align_corners=False),
                 'image': hr}
        targets = [{'boxes': torch.rand(1, 4), 'labels': torch.randint(0, 2, (1,))} for _ in range(b)]
        yield image, targets


config = SimpleNamespace(train={'gan_type': 'ragan'})
model = ESRGAN_EESN_FRCNN_Model(config)
current_step = 0
for epoch in range(1):
    for image, targets in train_loader():
        current_step += 1
        model.feed_data(image, targets)
        model.optimize_parameters(current_step)
