# Source: https://github.com/MC-E/Deep-Generalized-Unfolding-Networks-for-Image-Restoration/issues/6
"""Training DGUNet for deblurring (Deblurring/train.py): the network returns one restored image per
stage and the training loop sums the per-stage Charbonnier and edge losses with numpy,
`loss_char = np.sum([criterion_char(restored[j], target) for j in range(len(restored))])`. numpy
turns each loss tensor into an array, which a tensor that requires grad refuses: on CPU torch
raises "Can't call numpy() on Tensor that requires grad" (the reporter, on CUDA, got "can't
convert cuda:0 device type tensor to numpy"; the author's answer, update numpy, does not change
this, and the reporter's own rewrap in `torch.tensor([...], requires_grad=True)` runs but cuts the
losses off the network, so the PSNR never moves). CharbonnierLoss, EdgeLoss and the training loop
are the repository's; a three-stage residual conv net stands in for DGUNet, on random 16x16
blurred/sharp pairs."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class CharbonnierLoss(nn.Module):
    """Charbonnier Loss (L1)"""

    def __init__(self, eps=1e-3):
        super(CharbonnierLoss, self).__init__()
        self.eps = eps

    def forward(self, x, y):
        diff = x - y
        loss = torch.mean(torch.sqrt((diff * diff) + (self.eps * self.eps)))
        return loss


class EdgeLoss(nn.Module):
    def __init__(self):
        super(EdgeLoss, self).__init__()
        k = torch.Tensor([[.05, .25, .4, .25, .05]])
        self.kernel = torch.matmul(k.t(), k).unsqueeze(0).repeat(3, 1, 1, 1)
        self.loss = CharbonnierLoss()

    def conv_gauss(self, img):
        n_channels, _, kw, kh = self.kernel.shape
        img = F.pad(img, (kw // 2, kh // 2, kw // 2, kh // 2), mode='replicate')
        return F.conv2d(img, self.kernel, groups=n_channels)

    def laplacian_kernel(self, current):
        filtered = self.conv_gauss(current)
        down = filtered[:, :, ::2, ::2]
        new_filter = torch.zeros_like(filtered)
        new_filter[:, :, ::2, ::2] = down * 4
        filtered = self.conv_gauss(new_filter)
        diff = current - filtered
        return diff

    def forward(self, x, y):
        loss = self.loss(self.laplacian_kernel(x), self.laplacian_kernel(y))
        return loss


class Stage(nn.Module):
    def __init__(self, n_feat=8):
        super().__init__()
        self.body = nn.Sequential(nn.Conv2d(3, n_feat, 3, padding=1), nn.PReLU(),
                                  nn.Conv2d(n_feat, 3, 3, padding=1))

    def forward(self, x):
        return x + self.body(x)


class DGUNet(nn.Module):
    def __init__(self, depth=3):
        super().__init__()
        self.stages = nn.ModuleList([Stage() for _ in range(depth)])

    def forward(self, img):
        outputs = []
        x = img
        for stage in self.stages:
            x = stage(x)
            outputs.insert(0, x)
        return outputs


model_restoration = DGUNet()
optimizer = torch.optim.Adam(model_restoration.parameters(), lr=2e-4, betas=(0.9, 0.999), eps=1e-8)
criterion_char = CharbonnierLoss()
criterion_edge = EdgeLoss()

for epoch in range(1, 3):
    epoch_loss = 0
    model_restoration.train()
    for i in range(2):
        target = torch.rand(2, 3, 16, 16)
        input_ = target + 0.1 * torch.randn(2, 3, 16, 16)

        optimizer.zero_grad()
        restored = model_restoration(input_)

        loss_char = np.sum([criterion_char(restored[j], target) for j in range(len(restored))])  # expect: GG107
        loss_edge = np.sum([criterion_edge(restored[j], target) for j in range(len(restored))])
        loss = (loss_char) + (0.05 * loss_edge)
        loss.backward()
        optimizer.step()
        epoch_loss += loss.item()
    print(epoch, epoch_loss)
