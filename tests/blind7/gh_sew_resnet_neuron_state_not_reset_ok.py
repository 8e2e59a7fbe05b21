# Source: https://github.com/fangwei123456/Spike-Element-Wise-ResNet/issues/19
"""SEW-ResNet detector training with the maintainer's fix: fit_one_epoch calls
`functional.reset_net(model_train)` after each optimizer step, so every batch starts its neurons
from a fresh membrane potential instead of the previous batch's freed graph. Same SEW block, LIF
neurons and random event frames."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class MultiStepLIFNode(nn.Module):
    def __init__(self, tau=2.0, v_threshold=1.0, v_reset=0.0):
        super().__init__()
        self.tau, self.v_threshold, self.v_reset = tau, v_threshold, v_reset
        self.v = 0.

    def reset(self):
        self.v = 0.

    def forward(self, x_seq):  # x_seq: [T, N, ...]
        spikes = []
        for x in x_seq:
            self.v = self.v + (x - (self.v - self.v_reset)) / self.tau
            soft = torch.sigmoid(4. * (self.v - self.v_threshold))
            spike = soft + ((self.v >= self.v_threshold).float() - soft).detach()  # surrogate gradient
            self.v = self.v * (1. - spike) + self.v_reset * spike
            spikes.append(spike)
        return torch.stack(spikes)


class functional:
    @staticmethod
    def reset_net(net):
        for m in net.modules():
            if hasattr(m, 'reset'):
                m.reset()


class SeqToANNContainer(nn.Module):
    def __init__(self, *args):
        super().__init__()
        self.module = nn.Sequential(*args)

    def forward(self, x_seq):
        y = self.module(x_seq.flatten(0, 1))
        return y.view(x_seq.shape[0], x_seq.shape[1], *y.shape[1:])


class BasicBlock(nn.Module):
    def __init__(self, planes, connect_f='ADD'):
        super().__init__()
        self.conv1 = SeqToANNContainer(nn.Conv2d(planes, planes, 3, padding=1, bias=False), nn.BatchNorm2d(planes))
        self.sn1 = MultiStepLIFNode()
        self.conv2 = SeqToANNContainer(nn.Conv2d(planes, planes, 3, padding=1, bias=False), nn.BatchNorm2d(planes))
        self.sn2 = MultiStepLIFNode()
        self.connect_f = connect_f

    def forward(self, x):
        out = self.sn2(self.conv2(self.sn1(self.conv1(x))))
        if self.connect_f == 'ADD':
            out = out + x
        return out


class SEWResNetDetector(nn.Module):
    def __init__(self, T=4, planes=8, num_outputs=6):
        super().__init__()
        self.T = T
        self.conv1 = SeqToANNContainer(nn.Conv2d(2, planes, 3, padding=1, bias=False), nn.BatchNorm2d(planes))
        self.sn1 = MultiStepLIFNode()
        self.layer1 = BasicBlock(planes)
        self.head = nn.Linear(planes, num_outputs)

    def forward(self, x):
        x = x.unsqueeze(0).repeat(self.T, 1, 1, 1, 1)
        x = self.layer1(self.sn1(self.conv1(x)))
        return self.head(x.mean(dim=(0, 3, 4)))


def fit_one_epoch(model_train, model, optimizer, epoch, gen):
    loss = 0
    model_train.train()
    for iteration, (images, targets) in enumerate(gen):
        optimizer.zero_grad()
        outputs = model_train(images)
        loss_value = F.smooth_l1_loss(outputs, targets)
        loss_value.backward()
        optimizer.step()
        functional.reset_net(model_train)
        loss += loss_value.item()
    print('Epoch:' + str(epoch + 1), 'Total Loss: %.3f' % (loss / len(gen)))


model = SEWResNetDetector()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
gen = [(torch.rand(2, 2, 8, 8), torch.randn(2, 6)) for _ in range(3)]
for epoch in range(2):
    fit_one_epoch(model, model, optimizer, epoch, gen)
