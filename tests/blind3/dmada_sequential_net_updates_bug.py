# Source: https://github.com/ChrisAllenMing/Mixup_for_UDA/issues/6
"""DM-ADA (domain mixup for unsupervised domain adaptation, trainer_mixed.py): each iteration
builds every network's graph once (netF embeddings, netC logits, netG generations), then updates
D, G, C and F in turn, each with backward(retain_graph=True) followed by its optimizer's step.
errF.backward() then walks netG's and netC's graphs from before optimizerG.step() and
optimizerC.step() changed their weights in place: "[torch.cuda.FloatTensor [16, 1, 1, 4]], which
is output 0 of UnsqueezeBackward0, is at version 2; expected version 1" (the author: "requires
PyTorch 0.4.0/0.4.1"). Networks are the repository's with small widths, Variable wrappers and
.cuda() are left out, and random 32x32 images stand in for the digit datasets. Torch 2.13 raises
at errF.backward() before it reaches the graph errC.backward(retain_graph=True) kept (observed
GG203)."""
from types import SimpleNamespace

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim


class _netG(nn.Module):
    def __init__(self, opt, nclasses):
        super(_netG, self).__init__()
        self.ndim = opt.ndf*4
        self.ngf = opt.ngf
        self.nz = opt.nz
        self.nclasses = nclasses
        self.main = nn.Sequential(
            nn.ConvTranspose2d(self.ndim + self.nz + nclasses + 1, self.ngf*8, 2, 1, 0, bias=False),
            nn.BatchNorm2d(self.ngf*8), nn.ReLU(True),
            nn.ConvTranspose2d(self.ngf*8, self.ngf*4, 4, 2, 1, bias=False),
            nn.BatchNorm2d(self.ngf*4), nn.ReLU(True),
            nn.ConvTranspose2d(self.ngf*4, self.ngf*2, 4, 2, 1, bias=False),
            nn.BatchNorm2d(self.ngf*2), nn.ReLU(True),
            nn.ConvTranspose2d(self.ngf*2, self.ngf, 4, 2, 1, bias=False),
            nn.BatchNorm2d(self.ngf), nn.ReLU(True),
            nn.ConvTranspose2d(self.ngf, 3, 4, 2, 1, bias=False),
            nn.Tanh()
        )

    def forward(self, input):
        batchSize = input.size()[0]
        input = input.view(-1, self.ndim+self.nclasses+1, 1, 1)
        noise = torch.FloatTensor(batchSize, self.nz, 1, 1).normal_(0, 1)
        output = self.main(torch.cat((input, noise), 1))
        return output


class _netD(nn.Module):
    def __init__(self, opt, nclasses):
        super(_netD, self).__init__()
        self.ndf = opt.ndf
        self.feature = nn.Sequential(
            nn.Conv2d(3, self.ndf, 3, 1, 1), nn.BatchNorm2d(self.ndf), nn.LeakyReLU(0.2, inplace=True), nn.MaxPool2d(2, 2),
            nn.Conv2d(self.ndf, self.ndf*2, 3, 1, 1), nn.BatchNorm2d(self.ndf*2), nn.LeakyReLU(0.2, inplace=True), nn.MaxPool2d(2, 2),
            nn.Conv2d(self.ndf*2, self.ndf*4, 3, 1, 1), nn.BatchNorm2d(self.ndf*4), nn.LeakyReLU(0.2, inplace=True), nn.MaxPool2d(2, 2),
            nn.Conv2d(self.ndf*4, self.ndf*2, 3, 1, 1), nn.BatchNorm2d(self.ndf*2), nn.LeakyReLU(0.2, inplace=True), nn.MaxPool2d(4, 4)
        )
        self.classifier_c = nn.Sequential(nn.Linear(self.ndf*2, nclasses))
        self.classifier_s = nn.Sequential(nn.Linear(self.ndf, 1), nn.Sigmoid())
        self.classifier_t = nn.Sequential(nn.Linear(self.ndf*2, self.ndf))

    def forward(self, input):
        output = self.feature(input)
        output_c = self.classifier_c(output.view(-1, self.ndf * 2))
        output_t = self.classifier_t(output.view(-1, self.ndf * 2))
        output_s = self.classifier_s(output_t)
        output_s = output_s.view(-1)
        return output_s, output_c, output_t


class _netF(nn.Module):
    def __init__(self, opt):
        super(_netF, self).__init__()
        self.ndf = opt.ndf
        self.feature = nn.Sequential(
            nn.Conv2d(3, self.ndf, 5, 1, 0), nn.ReLU(inplace=True), nn.MaxPool2d(2, 2),
            nn.Conv2d(self.ndf, self.ndf, 5, 1, 0), nn.ReLU(inplace=True), nn.MaxPool2d(2, 2),
            nn.Conv2d(self.ndf, self.ndf*2, 5, 1, 0), nn.ReLU(inplace=True)
        )
        self.mean = nn.Sequential(nn.Linear(self.ndf*2, self.ndf*2))
        self.std = nn.Sequential(nn.Linear(self.ndf*2, self.ndf*2))

    def forward(self, input):
        output = self.feature(input)
        mean_vector = self.mean(output.view(-1, 2*self.ndf))
        std_vector = self.std(output.view(-1, 2*self.ndf))
        return output.view(-1, 2*self.ndf), mean_vector, std_vector


class _netC(nn.Module):
    def __init__(self, opt, nclasses):
        super(_netC, self).__init__()
        self.ndf = opt.ndf
        self.main = nn.Sequential(nn.Linear(4*self.ndf, 2*self.ndf), nn.ReLU(inplace=True),
                                  nn.Linear(2*self.ndf, nclasses))
        self.soft = nn.Sequential(nn.Sigmoid())

    def forward(self, input):
        output_logit = self.main(input)
        output = self.soft(output_logit)
        return output_logit, output


class DM_ADA(object):
    def __init__(self, opt, nclasses, mean, std, source_trainloader, target_trainloader):
        self.source_trainloader = source_trainloader
        self.target_trainloader = target_trainloader
        self.opt = opt
        self.mean = mean
        self.std = std
        self.real_label_val = 1
        self.fake_label_val = 0
        self.nclasses = nclasses

        self.netG = _netG(opt, nclasses)
        self.netD = _netD(opt, nclasses)
        self.netF = _netF(opt)
        self.netC = _netC(opt, nclasses)

        self.criterion_c = nn.CrossEntropyLoss()
        self.criterion_s = nn.BCELoss()

        self.optimizerD = optim.Adam(self.netD.parameters(), lr=opt.lr, betas=(0.8, 0.999))
        self.optimizerG = optim.Adam(self.netG.parameters(), lr=opt.lr, betas=(0.8, 0.999))
        self.optimizerF = optim.Adam(self.netF.parameters(), lr=opt.lr, betas=(0.8, 0.999))
        self.optimizerC = optim.Adam(self.netC.parameters(), lr=opt.lr, betas=(0.8, 0.999))

    def train(self):
        reallabelv = torch.FloatTensor(self.opt.batchSize).fill_(self.real_label_val)
        fakelabelv = torch.FloatTensor(self.opt.batchSize).fill_(self.fake_label_val)

        for epoch in range(self.opt.nepochs):
            self.netG.train()
            self.netF.train()
            self.netC.train()
            self.netD.train()

            for i, (datas, datat) in enumerate(zip(self.source_trainloader, self.target_trainloader)):
                src_inputs, src_labels = datas
                tgt_inputs, __ = datat
                src_inputs_unnorm = (((src_inputs * self.std[0]) + self.mean[0]) - 0.5) * 2
                tgt_inputs_unnorm = (((tgt_inputs * self.std[0]) + self.mean[0]) - 0.5) * 2

                labels_onehot = np.zeros((self.opt.batchSize, self.nclasses + 1), dtype=np.float32)
                for num in range(self.opt.batchSize):
                    labels_onehot[num, src_labels[num]] = 1
                src_labels_onehotv = torch.from_numpy(labels_onehot)
                labels_onehot = np.zeros((self.opt.batchSize, self.nclasses + 1), dtype=np.float32)
                for num in range(self.opt.batchSize):
                    labels_onehot[num, self.nclasses] = 1
                tgt_labels_onehotv = torch.from_numpy(labels_onehot)

                # Mix source and target domain images
                mix_ratio = np.random.beta(self.opt.alpha, self.opt.alpha)
                mix_ratio = round(mix_ratio, 2)
                if (mix_ratio >= 0.5 and mix_ratio < (0.5 + self.opt.clip_thr)):
                    mix_ratio = 0.5 + self.opt.clip_thr
                if (mix_ratio > (0.5 - self.opt.clip_thr) and mix_ratio < 0.5):
                    mix_ratio = 0.5 - self.opt.clip_thr
                mix_labelv = torch.FloatTensor(self.opt.batchSize).fill_(mix_ratio)
                mix_samples = mix_ratio * src_inputs_unnorm + (1 - mix_ratio) * tgt_inputs_unnorm
                labels_onehot = np.zeros((self.opt.batchSize, self.nclasses + 1), dtype=np.float32)
                for num in range(self.opt.batchSize):
                    labels_onehot[num, src_labels[num]] = mix_ratio
                    labels_onehot[num, self.nclasses] = 1.0 - mix_ratio
                mix_labels_onehotv = torch.from_numpy(labels_onehot)

                # Generating images for both domains (add mixed images)
                src_emb, src_mn, src_sd = self.netF(src_inputs)
                tgt_emb, tgt_mn, tgt_sd = self.netF(tgt_inputs)
                mix_mn = src_mn * mix_ratio + tgt_mn * (1.0 - mix_ratio)
                mix_sd = src_sd * mix_ratio + tgt_sd * (1.0 - mix_ratio)

                src_mn_sd = torch.cat((src_mn, src_sd), 1)
                outC_src_logit, outC_src = self.netC(src_mn_sd)

                src_emb_cat = torch.cat((src_mn, src_sd, src_labels_onehotv), 1)
                src_gen = self.netG(src_emb_cat)
                tgt_emb_cat = torch.cat((tgt_mn, tgt_sd, tgt_labels_onehotv), 1)
                tgt_gen = self.netG(tgt_emb_cat)
                mix_emb_cat = torch.cat((mix_mn, mix_sd, mix_labels_onehotv), 1)
                mix_gen = self.netG(mix_emb_cat)

                # Updating D network
                self.netD.zero_grad()
                src_realoutputD_s, src_realoutputD_c, src_realoutputD_t = self.netD(src_inputs_unnorm)
                errD_src_real_s = self.criterion_s(src_realoutputD_s, reallabelv)
                errD_src_real_c = self.criterion_c(src_realoutputD_c, src_labels)
                src_fakeoutputD_s, src_fakeoutputD_c, _ = self.netD(src_gen)
                errD_src_fake_s = self.criterion_s(src_fakeoutputD_s, fakelabelv)
                tgt_realoutputD_s, tgt_realoutputD_c, tgt_realoutputD_t = self.netD(tgt_inputs_unnorm)
                tgt_fakeoutputD_s, tgt_fakeoutputD_c, _ = self.netD(tgt_gen)
                errD_tgt_fake_s = self.criterion_s(tgt_fakeoutputD_s, fakelabelv)

                mix_s, _, mix_t = self.netD(mix_samples)
                if (mix_ratio > 0.5):
                    tmp_margin = 2 * mix_ratio - 1.
                    errD_mix_t = F.triplet_margin_loss(mix_t, src_realoutputD_t, tgt_realoutputD_t, margin=tmp_margin)
                else:
                    tmp_margin = 1. - 2 * mix_ratio
                    errD_mix_t = F.triplet_margin_loss(mix_t, tgt_realoutputD_t, src_realoutputD_t, margin=tmp_margin)
                errD_mix_s = self.criterion_s(mix_s, mix_labelv)
                errD_mix = errD_mix_s + errD_mix_t
                mix_gen_s, _, _ = self.netD(mix_gen)
                errD_mix_gen = self.criterion_s(mix_gen_s, fakelabelv)

                errD = errD_src_real_c + errD_src_real_s + errD_src_fake_s + errD_tgt_fake_s + errD_mix + errD_mix_gen
                errD.backward(retain_graph=True)
                self.optimizerD.step()

                # Updating G network
                self.netG.zero_grad()
                src_fakeoutputD_s, src_fakeoutputD_c, _ = self.netD(src_gen)
                errG_src_c = self.criterion_c(src_fakeoutputD_c, src_labels)
                errG_src_s = self.criterion_s(src_fakeoutputD_s, reallabelv)
                mix_gen_s, _, _ = self.netD(mix_gen)
                errG_mix_gen_s = self.criterion_s(mix_gen_s, reallabelv)
                errG = errG_src_c + errG_src_s + errG_mix_gen_s
                errG.backward(retain_graph=True)
                self.optimizerG.step()

                # Updating C network
                self.netC.zero_grad()
                errC = self.criterion_c(outC_src_logit, src_labels)
                errC.backward(retain_graph=True)  # expect: GG203
                self.optimizerC.step()

                # Updating F network
                self.netF.zero_grad()
                err_KL_src = torch.mean(0.5 * torch.sum(torch.exp(src_sd) + src_mn ** 2 - 1. - src_sd, 1))
                err_KL_tgt = torch.mean(0.5 * torch.sum(torch.exp(tgt_sd) + tgt_mn ** 2 - 1. - tgt_sd, 1))
                err_KL = (err_KL_src + err_KL_tgt) * (self.opt.KL_weight)
                errF_fromC = self.criterion_c(outC_src_logit, src_labels)
                src_fakeoutputD_s, src_fakeoutputD_c, _ = self.netD(src_gen)
                errF_src_fromD = self.criterion_c(src_fakeoutputD_c, src_labels) * (self.opt.adv_weight)
                tgt_fakeoutputD_s, tgt_fakeoutputD_c, _ = self.netD(tgt_gen)
                errF_tgt_fromD = self.criterion_s(tgt_fakeoutputD_s, reallabelv) * (self.opt.adv_weight * self.opt.gamma)
                mix_gen_s, _, _ = self.netD(mix_gen)
                errF_mix_fromD = self.criterion_s(mix_gen_s, reallabelv) * (self.opt.adv_weight * self.opt.delta)

                errF = err_KL + errF_fromC + errF_src_fromD + errF_tgt_fromD + errF_mix_fromD
                errF.backward()  # expect: GG103
                self.optimizerF.step()


opt = SimpleNamespace(ndf=4, ngf=4, nz=4, batchSize=4, lr=5e-4, nepochs=1, alpha=2.0, clip_thr=0.3,
                      KL_weight=1.0, adv_weight=0.1, gamma=0.3, delta=0.3)
nclasses = 3
source_trainloader = [(torch.randn(4, 3, 32, 32), torch.randint(0, nclasses, (4,))) for _ in range(2)]
target_trainloader = [(torch.randn(4, 3, 32, 32), torch.randint(0, nclasses, (4,))) for _ in range(2)]
DM_ADA(opt, nclasses, [0.5], [0.5], source_trainloader, target_trainloader).train()
