# Source: https://github.com/swz30/MPRNet/issues/112
"""MPRNet's training loop with the stage losses summed by Python's built-in sum instead of np.sum
(the maintainer answers the issue only with links to earlier comments): the built-in sum of the
stage-loss tensors is a tensor with a graph, which loss.backward() then walks."""
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
        loss = torch.mean(torch.sqrt((diff * diff) + (self.eps*self.eps)))
        return loss


class EdgeLoss(nn.Module):
    def __init__(self):
        super(EdgeLoss, self).__init__()
        k = torch.Tensor([[.05, .25, .4, .25, .05]])
        self.kernel = torch.matmul(k.t(), k).unsqueeze(0).repeat(3, 1, 1, 1)
        self.loss = CharbonnierLoss()

    def conv_gauss(self, img):
        n_channels, _, kw, kh = self.kernel.shape
        img = F.pad(img, (kw//2, kh//2, kw//2, kh//2), mode='replicate')
        return F.conv2d(img, self.kernel, groups=n_channels)

    def laplacian_kernel(self, current):
        filtered = self.conv_gauss(current)
        down = filtered[:, :, ::2, ::2]
        new_filter = torch.zeros_like(filtered)
        new_filter[:, :, ::2, ::2] = down*4
        filtered = self.conv_gauss(new_filter)
        diff = current - filtered
        return diff

    def forward(self, x, y):
        loss = self.loss(self.laplacian_kernel(x), self.laplacian_kernel(y))
        return loss


class Stage(nn.Module):
    def __init__(self, n_feat=8):
        super(Stage, self).__init__()
        self.body = nn.Sequential(nn.Conv2d(3, n_feat, 3, padding=1), nn.PReLU(),
                                  nn.Conv2d(n_feat, 3, 3, padding=1))

    def forward(self, x):
        return x + self.body(x)


class MPRNet(nn.Module):
    def __init__(self):
        super(MPRNet, self).__init__()
        self.stage1 = Stage()
        self.stage2 = Stage()
        self.stage3 = Stage()

    def forward(self, x3_img):
        stage1_img = self.stage1(x3_img)
        stage2_img = self.stage2(stage1_img)
        stage3_img = self.stage3(stage2_img)
        return [stage3_img, stage2_img, stage1_img]


model_restoration = MPRNet()
optimizer = torch.optim.Adam(model_restoration.parameters(), lr=2e-4, betas=(0.9, 0.999), eps=1e-8)
criterion_char = CharbonnierLoss()
criterion_edge = EdgeLoss()
train_loader = [(torch.rand(2, 3, 16, 16), torch.rand(2, 3, 16, 16)) for _ in range(3)]

for epoch in range(1, 3):
    epoch_loss = 0
    model_restoration.train()
    for i, data in enumerate(train_loader, 0):
        # zero_grad
        for param in model_restoration.parameters():
            param.grad = None

        target = data[0]
        input_ = data[1]

        restored = model_restoration(input_)

        # Compute loss at each stage
        loss_char = sum([criterion_char(restored[j], target) for j in range(len(restored))])
        loss_edge = sum([criterion_edge(restored[j], target) for j in range(len(restored))])
        loss = (loss_char) + (0.05*loss_edge)

        loss.backward()
        optimizer.step()
        epoch_loss += loss.item()
    print(epoch, epoch_loss)
