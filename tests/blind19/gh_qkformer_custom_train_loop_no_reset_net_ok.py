# Source: https://github.com/zhouchenlin2096/QKFormer/issues/10
"""QKFormer (a spiking transformer built on spikingjelly) trained with the reporter's
own training loop instead of QKFormer's train.py.

spikingjelly neurons are stateful: each MultiStepLIFNode keeps its membrane potential
`self.v` between calls, and QKFormer's training script calls
`functional.reset_net(model)` after every `optimizer.step()` to put it back to
`v_reset`. The reporter's loop never resets, so the second batch starts from the
membrane potentials left by the first one: they are still attached to the first
batch's graph, which `loss_total.backward()` already freed, and the second backward
raises "Trying to backward through the graph a second time".

This is the fixed twin; the fix: call `functional.reset_net(model)`
after `optimizer.step()` (as QKFormer's train.py does). spikingjelly is replaced by a
small stand-in with the same semantics (MemoryModule state, reset_net, multi-step LIF
with sigmoid surrogate and detached hard reset); QKFormer is shrunk to one
Token-QK-attention block.
"""
import time
from contextlib import suppress

import torch
import torch.nn as nn
import torch.nn.functional as F


# ---- spikingjelly stand-in ----------------------------------------------------------------
class SigmoidSurrogate(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, alpha):
        ctx.save_for_backward(x)
        ctx.alpha = alpha
        return (x >= 0).to(x)

    @staticmethod
    def backward(ctx, grad_output):
        x, = ctx.saved_tensors
        sg = torch.sigmoid(ctx.alpha * x)
        return grad_output * (1 - sg) * sg * ctx.alpha, None


class MultiStepLIFNode(nn.Module):
    def __init__(self, tau=2., v_threshold=1., v_reset=0., detach_reset=True):
        super().__init__()
        self.tau, self.v_threshold, self.v_reset, self.detach_reset = tau, v_threshold, v_reset, detach_reset
        self.v = v_reset  # memory: kept between calls until reset()

    def reset(self):
        self.v = self.v_reset

    def single_step_forward(self, x):
        self.v = self.v + (x - (self.v - self.v_reset)) / self.tau  # neuronal charge
        spike = SigmoidSurrogate.apply(self.v - self.v_threshold, 4.)
        spike_d = spike.detach() if self.detach_reset else spike
        self.v = self.v * (1. - spike_d) + self.v_reset * spike_d  # hard reset
        return spike

    def forward(self, x_seq):
        return torch.stack([self.single_step_forward(x) for x in x_seq])


class functional:
    @staticmethod
    def reset_net(net):
        for m in net.modules():
            if hasattr(m, 'reset'):
                m.reset()


# ---- QKFormer (abridged) -------------------------------------------------------------------
class Token_QK_Attention(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.q_conv = nn.Conv1d(dim, dim, 1, bias=False)
        self.q_bn = nn.BatchNorm1d(dim)
        self.q_lif = MultiStepLIFNode(tau=2.)
        self.k_conv = nn.Conv1d(dim, dim, 1, bias=False)
        self.k_bn = nn.BatchNorm1d(dim)
        self.k_lif = MultiStepLIFNode(tau=2.)
        self.attn_lif = MultiStepLIFNode(tau=2., v_threshold=0.5)
        self.proj_conv = nn.Conv1d(dim, dim, 1)
        self.proj_bn = nn.BatchNorm1d(dim)
        self.proj_lif = MultiStepLIFNode(tau=2.)

    def forward(self, x):
        T, B, C, N = x.shape
        x_for_qkv = x.flatten(0, 1)
        q = self.q_lif(self.q_bn(self.q_conv(x_for_qkv)).reshape(T, B, C, N))
        k = self.k_lif(self.k_bn(self.k_conv(x_for_qkv)).reshape(T, B, C, N))
        q = torch.sum(q, dim=2, keepdim=True)
        attn = self.attn_lif(q)
        x = torch.mul(attn, k)
        x = self.proj_bn(self.proj_conv(x.flatten(0, 1))).reshape(T, B, C, N)
        return self.proj_lif(x)


class QKFormer(nn.Module):
    def __init__(self, in_channels=3, embed_dim=8, num_classes=1, T=2):
        super().__init__()
        self.T = T
        self.proj_conv = nn.Conv2d(in_channels, embed_dim, 3, padding=1, bias=False)
        self.proj_bn = nn.BatchNorm2d(embed_dim)
        self.proj_lif = MultiStepLIFNode(tau=2.)
        self.attn = Token_QK_Attention(embed_dim)
        self.head = nn.Linear(embed_dim, num_classes)

    def forward(self, x):
        x = x.unsqueeze(0).repeat(self.T, 1, 1, 1, 1)  # T, B, C, H, W
        T, B = x.shape[:2]
        x = self.proj_bn(self.proj_conv(x.flatten(0, 1)))
        x = self.proj_lif(x.reshape(T, B, *x.shape[1:]))  # T, B, C, H, W
        x = x.flatten(3)  # T, B, C, N
        x = x + self.attn(x)
        x = x.mean(3).mean(0)  # B, C
        return self.head(x)


# ---- the reporter's training framework -----------------------------------------------------
def cal_loss(pre_label, label):
    bce = F.binary_cross_entropy_with_logits(pre_label, label)
    return {'bce': bce, 'total': bce}


def main(config):
    model = QKFormer()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    train_loader = [(torch.randn(4, 3, 8, 8), torch.randint(0, 2, (4,))) for _ in range(3)]

    for epoch in range(1, config['epochs'] + 1):
        epoch_start_time = time.time()  # timer for entire epoch
        model.train()
        total_loss_epoch = 0
        epoch_iter = 0
        for iteration, data in enumerate(train_loader):
            img = data[0]
            label = data[1].float()
            with suppress():
                pre_label = model(img).squeeze(1).float()
                loss_dict = cal_loss(pre_label, label)
                loss_total = loss_dict['total']
            optimizer.zero_grad()
            loss_total.backward()
            optimizer.step()
            functional.reset_net(model)
            total_loss_epoch += loss_total.item()
            epoch_iter += 1
        print('epoch {} loss {:.4f} ({:.2f}s)'.format(epoch, total_loss_epoch / epoch_iter,
                                                    time.time() - epoch_start_time))


if __name__ == '__main__':
    torch.manual_seed(0)
    main({'epochs': 2})
