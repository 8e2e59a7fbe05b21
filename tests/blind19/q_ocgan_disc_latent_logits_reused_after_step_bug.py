# Source: https://github.com/xiehousen/OCGAN-Pytorch/issues/3
"""OCGAN-Pytorch train(): `loss_ae_all.backward()` raises "one of the variables needed for gradient
computation has been modified by an inplace operation: [torch.cuda.FloatTensor [16, 1]], which is
output 0 of TBackward, is at version 2; expected version 1".

Each batch updates the classifier, the latent discriminator disc_l, the visual discriminator, the
latent l2 and finally the auto-encoder. The latent-discriminator logits `logits_Dl_l1 =
disc_l(disc_l_l1)` are computed once, used for `loss_dl` (backward with retain_graph=True, then
optimizer_dl.step() updates disc_l's weights in place) and reused in the auto-encoder loss
`loss_AE_l`. loss_ae_all.backward() has to go back through disc_l's linear layers, whose saved
weights (dense_5.weight.t(), [16, 1]) the step has already changed. The thread has no fix; the
right one is to run disc_l again on the encoded latent after its step, in the auto-encoder update.
Sizes are shrunk (batch 8, two batches, random MNIST-like data, CPU); the dataloader, Bar and
Logger are small stand-ins.
"""
import time
import argparse
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.autograd import Variable

torch.manual_seed(0)
np.random.seed(0)


def weights_init(mod):
    classname = mod.__class__.__name__
    if classname.find('Conv') != -1:
        mod.weight.data.normal_(0.0, 0.02)
    elif classname.find('BatchNorm') != -1:
        mod.weight.data.normal_(1.0, 0.02)
        mod.bias.data.fill_(0)


class get_encoder(nn.Module):
    def __init__(self):
        super(get_encoder, self).__init__()
        self.conv1 = nn.Conv2d(1, 32, 3, padding=3 // 2)
        self.conv2 = nn.Conv2d(32, 32, 3, padding=3 // 2)
        self.batch_norm_1 = nn.BatchNorm2d(32)
        self.maxpooling_1 = nn.MaxPool2d(3, stride=2, padding=3 // 2)
        self.conv3 = nn.Conv2d(32, 64, 3, padding=3 // 2)
        self.conv4 = nn.Conv2d(64, 64, 3, padding=3 // 2)
        self.batch_norm_2 = nn.BatchNorm2d(64)
        self.maxpooling_2 = nn.MaxPool2d(3, stride=2, padding=3 // 2)
        self.conv5 = nn.Conv2d(64, 32, 3)
        self.conv6 = nn.Conv2d(32, 32, 3)

    def forward(self, input):
        output = torch.tanh(self.conv1(input))
        output = torch.tanh(self.conv2(output))
        output = self.batch_norm_1(output)
        output = self.maxpooling_1(output)
        output = torch.tanh(self.conv3(output))
        output = torch.tanh(self.conv4(output))
        output = self.batch_norm_2(output)
        output = self.maxpooling_2(output)
        output = torch.tanh(self.conv5(output))
        output = torch.tanh(self.conv6(output))
        output = output.view(output.size(0), -1)
        return output


class get_decoder(nn.Module):
    def __init__(self):
        super(get_decoder, self).__init__()
        self.conv1 = nn.Upsample(scale_factor=2, mode='nearest')
        self.conv2 = nn.ConvTranspose2d(32, 32, 3, padding=3 // 2)
        self.conv3 = nn.ConvTranspose2d(32, 32, 3, padding=3 // 2)
        self.batch_norm_1 = nn.BatchNorm2d(32)
        self.conv4 = nn.Upsample(scale_factor=2, mode='nearest')
        self.conv5 = nn.ConvTranspose2d(32, 64, 3, padding=3 // 2)
        self.conv6 = nn.ConvTranspose2d(64, 64, 3, padding=3 // 2)
        self.batch_norm_2 = nn.BatchNorm2d(64)
        self.conv7 = nn.Upsample(scale_factor=2, mode='nearest')
        self.conv8 = nn.ConvTranspose2d(64, 64, 3)
        self.conv9 = nn.ConvTranspose2d(64, 64, 3)
        self.batch_norm_3 = nn.BatchNorm2d(64)
        self.conv10 = nn.ConvTranspose2d(64, 1, 3, padding=3 // 2)

    def forward(self, input):
        output = input.view(input.size(0), 32, 3, 3)
        output = self.conv1(output)
        output = torch.tanh(self.conv2(output))
        output = torch.tanh(self.conv3(output))
        output = self.batch_norm_1(output)
        output = self.conv4(output)
        output = torch.tanh(self.conv5(output))
        output = torch.tanh(self.conv6(output))
        output = self.batch_norm_2(output)
        output = self.conv7(output)
        output = torch.tanh(self.conv8(output))
        output = torch.tanh(self.conv9(output))
        output = self.batch_norm_3(output)
        output = torch.sigmoid(self.conv10(output))
        return output


class get_disc_latent(nn.Module):
    def __init__(self):
        super(get_disc_latent, self).__init__()
        self.dense_1 = nn.Linear(288, 128)
        self.batch_norm_1 = nn.BatchNorm1d(128)
        self.dense_2 = nn.Linear(128, 64)
        self.batch_norm_2 = nn.BatchNorm1d(64)
        self.dense_3 = nn.Linear(64, 32)
        self.batch_norm_3 = nn.BatchNorm1d(32)
        self.dense_4 = nn.Linear(32, 16)
        self.batch_norm_4 = nn.BatchNorm1d(16)
        self.dense_5 = nn.Linear(16, 1)

    def forward(self, input):
        output = input.view(input.size(0), -1)
        output = self.batch_norm_1(self.dense_1(output))
        output = F.relu(output)
        output = self.batch_norm_2(self.dense_2(output))
        output = F.relu(output)
        output = self.batch_norm_3(self.dense_3(output))
        output = F.relu(output)
        output = self.batch_norm_4(self.dense_4(output))
        output = F.relu(output)
        output = self.dense_5(output)
        output = torch.sigmoid(output)
        return output


class get_disc_visual(nn.Module):
    def __init__(self):
        super(get_disc_visual, self).__init__()
        self.conv1 = nn.Conv2d(1, 16, 5, stride=2, padding=5 // 2)
        self.batch_norm_1 = nn.BatchNorm2d(16)
        self.leaky_relu = nn.LeakyReLU(0.2)
        self.conv2 = nn.Conv2d(16, 16, 5, stride=2, padding=5 // 2)
        self.batch_norm_2 = nn.BatchNorm2d(16)
        self.conv3 = nn.Conv2d(16, 16, 5, stride=2, padding=5 // 2)
        self.batch_norm_3 = nn.BatchNorm2d(16)
        self.conv4 = nn.Conv2d(16, 1, 5, stride=2, padding=5 // 2)
        self.conv5 = nn.AdaptiveAvgPool2d(output_size=1)

    def forward(self, input):
        output = self.batch_norm_1(self.conv1(input))
        output = self.leaky_relu(output)
        output = self.batch_norm_2(self.conv2(output))
        output = self.leaky_relu(output)
        output = self.batch_norm_3(self.conv3(output))
        output = self.leaky_relu(output)
        output = self.conv4(output)
        output = torch.sigmoid(self.conv5(output))
        output = output.view(output.size(0), -1)
        return output


class get_classifier(nn.Module):
    def __init__(self):
        super(get_classifier, self).__init__()
        self.conv1 = nn.Conv2d(1, 8, 5, stride=1, padding=5 // 2)
        self.batch_norm_1 = nn.BatchNorm2d(8)
        self.leaky_relu = nn.LeakyReLU(0.2)
        self.conv2 = nn.Conv2d(8, 8, 5, stride=1, padding=5 // 2)
        self.batch_norm_2 = nn.BatchNorm2d(8)
        self.conv3 = nn.Conv2d(8, 8, 5, stride=1, padding=5 // 2)
        self.batch_norm_3 = nn.BatchNorm2d(8)
        self.conv4 = nn.Conv2d(8, 1, 5, stride=1, padding=5 // 2)
        self.conv5 = nn.AdaptiveAvgPool2d(output_size=1)

    def forward(self, input):
        output = self.batch_norm_1(self.conv1(input))
        output = self.leaky_relu(output)
        output = self.batch_norm_2(self.conv2(output))
        output = self.leaky_relu(output)
        output = self.batch_norm_3(self.conv3(output))
        output = self.leaky_relu(output)
        output = self.conv4(output)
        output = torch.sigmoid(self.conv5(output))
        output = output.view(output.size(0), -1)
        return output


class AverageMeter(object):
    def __init__(self):
        self.val = self.avg = self.sum = self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


def load_data(args):
    """Stand-in for the MNIST one-class loader: two random batches."""
    batches = [(torch.rand(args.train_batch, 1, 28, 28), torch.zeros(args.train_batch, dtype=torch.long))
               for _ in range(2)]
    return {'train': batches, 'test': batches}


def train(args, trainloader, enc, dec, cl, disc_l, disc_v,
          optimizer_en, optimizer_de, optimizer_c, optimizer_dl, optimizer_dv, optimizer_l2,
          criterion_ae, criterion_ce, Tensor, epoch, use_cuda):
    enc.train()
    dec.train()
    cl.train()
    disc_l.train()
    disc_v.train()

    batch_time = AverageMeter()
    data_time = AverageMeter()
    losses = AverageMeter()
    end = time.time()

    for batch_idx, (inputs, targets) in enumerate(trainloader):
        data_time.update(time.time() - end)
        inputs, targets = torch.autograd.Variable(inputs), torch.autograd.Variable(targets)

        u = np.random.uniform(-1, 1, (args.train_batch, 288, 1, 1))
        l2 = torch.from_numpy(u).float()

        dec_l2 = dec(l2)
        n = torch.randn(args.train_batch, 1, 28, 28)
        l1 = enc(inputs + n)
        logits_C_l1 = cl(dec(l1))
        logits_C_l2 = cl(dec_l2)

        valid_logits_C_l1 = Variable(Tensor(logits_C_l1.shape[0], 1).fill_(1.0), requires_grad=False)
        fake_logits_C_l2 = Variable(Tensor(logits_C_l2.shape[0], 1).fill_(0.0), requires_grad=False)

        loss_cl_l1 = criterion_ce(logits_C_l1, valid_logits_C_l1)
        loss_cl_l2 = criterion_ce(logits_C_l2, fake_logits_C_l2)
        loss_cl = (loss_cl_l1 + loss_cl_l2) / 2

        cl.zero_grad()
        loss_cl.backward(retain_graph=True)
        optimizer_c.step()

        disc_l_l1 = l1.view(l1.size(0), 32, 3, 3)
        disc_l.zero_grad()
        logits_Dl_l1 = disc_l(disc_l_l1)
        logits_Dl_l2 = disc_l(l2)
        dl_logits_DL_l1 = Variable(Tensor(logits_Dl_l1.shape[0], 1).fill_(0.0), requires_grad=False)
        dl_logits_DL_l2 = Variable(Tensor(logits_Dl_l2.shape[0], 1).fill_(1.0), requires_grad=False)

        loss_dl_1 = criterion_ce(logits_Dl_l1, dl_logits_DL_l1)
        loss_dl_2 = criterion_ce(logits_Dl_l2, dl_logits_DL_l2)
        loss_dl = (loss_dl_1 + loss_dl_2) / 2

        loss_dl.backward(retain_graph=True)
        optimizer_dl.step()

        logits_Dv_X = disc_v(inputs)
        logits_Dv_l2 = disc_v(dec(l2))

        dv_logits_Dv_X = Variable(Tensor(logits_Dv_X.shape[0], 1).fill_(1.0), requires_grad=False)
        dv_logits_Dv_l2 = Variable(Tensor(logits_Dv_l2.shape[0], 1).fill_(0.0), requires_grad=False)

        loss_dv_1 = criterion_ce(logits_Dv_X, dv_logits_Dv_X)
        loss_dv_2 = criterion_ce(logits_Dv_l2, dv_logits_Dv_l2)
        loss_dv = (loss_dv_1 + loss_dv_2) / 2

        disc_v.zero_grad()
        loss_dv.backward()
        optimizer_dv.step()

        for i in range(5):
            logits_C_l2_mine = cl(dec(l2))
            zeros_logits_C_l2_mine = Variable(Tensor(logits_C_l2_mine.shape[0], 1).fill_(0.0), requires_grad=False)
            loss_C_l2_mine = criterion_ce(logits_C_l2_mine, zeros_logits_C_l2_mine)
            optimizer_l2.zero_grad()
            loss_C_l2_mine.backward()
            optimizer_l2.step()

        ######  update ae
        out_gv1 = disc_v(dec(l2))
        Xh = dec(l1)
        loss_mse = criterion_ae(Xh, inputs)
        ones_logits_Dl_l1 = Variable(Tensor(logits_Dl_l1.shape[0], 1).fill_(1.0), requires_grad=False)

        loss_AE_l = criterion_ce(logits_Dl_l1, ones_logits_Dl_l1)

        logits_Dv_l2_mine = disc_v(dec_l2)
        ones_logits_Dv_l2_mine = Variable(Tensor(logits_Dv_l2_mine.shape[0], 1).fill_(1.0), requires_grad=False)
        loss_ae_v = criterion_ce(logits_Dv_l2_mine, ones_logits_Dv_l2_mine)

        loss_ae_all = 10 * loss_mse + loss_ae_v + loss_AE_l

        enc.zero_grad()
        dec.zero_grad()
        loss_ae_all.backward()  # expect: GG103
        optimizer_en.step()
        optimizer_de.step()

        losses.update(loss_ae_all.item(), inputs.size(0))
        batch_time.update(time.time() - end)
        end = time.time()
    return losses.avg


def main(args):
    dataloader = load_data(args)
    Tensor = torch.FloatTensor
    use_cuda = False

    enc = get_encoder()
    dec = get_decoder()
    disc_v = get_disc_visual()
    disc_l = get_disc_latent()
    cl = get_classifier()

    disc_v.apply(weights_init)
    cl.apply(weights_init)
    enc.apply(weights_init)
    dec.apply(weights_init)
    disc_l.apply(weights_init)

    criterion_ce = torch.nn.BCELoss()
    criterion_ae = nn.MSELoss()

    l2_int = torch.empty(size=(args.train_batch, 288, 1, 1), dtype=torch.float32)

    optimizer_en = optim.Adam(enc.parameters(), lr=args.lr, betas=(0.9, 0.99))
    optimizer_de = optim.Adam(dec.parameters(), lr=args.lr, betas=(0.9, 0.99))
    optimizer_dl = optim.Adam(disc_l.parameters(), lr=args.lr, betas=(0.9, 0.99))
    optimizer_dv = optim.Adam(disc_v.parameters(), lr=args.lr, betas=(0.9, 0.99))
    optimizer_c = optim.Adam(cl.parameters(), lr=args.lr, betas=(0.9, 0.99))
    optimizer_l2 = optim.Adam([{'params': l2_int}], lr=args.lr, betas=(0.9, 0.99))

    for epoch in range(args.start_epoch, args.epochs):
        train_loss = train(args, dataloader['train'], enc, dec, cl, disc_l, disc_v,
                           optimizer_en, optimizer_de, optimizer_c, optimizer_dl, optimizer_dv, optimizer_l2,
                           criterion_ae, criterion_ce,
                           Tensor, epoch, use_cuda)
        print('epoch', epoch, 'train loss', train_loss)


args = argparse.Namespace(train_batch=8, lr=0.001, start_epoch=0, epochs=1)
main(args)
