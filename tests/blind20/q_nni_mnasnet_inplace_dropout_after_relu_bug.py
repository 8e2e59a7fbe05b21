# Source: https://github.com/microsoft/nni/pull/4614
"""NNI, examples/nas/multi-trial/mnasnet/base_mnasnet.py before PR #4614 ("Fix bug Issue4592"):
the MNASNet search space ends with

    x = self.layers(x)
    x = x.mean([2, 3])
    x = F.relu(x)
    return self.classifier(x)   # classifier = Sequential(nn.Dropout(p=dropout, inplace=True), nn.Linear(1280, n))

`F.relu` saves its output for the backward and the in-place Dropout overwrites it, so training a
sampled architecture fails at `loss.backward()` with "one of the variables needed for gradient
computation has been modified by an inplace operation" (issue #4592; the PR author: "the back
propagation is interrupted by the `inplace` operation in dropout layer").

Fix (in the _ok twin, as in the PR): `nn.Dropout(p=dropout)`, not in place.

Stand-ins: the Retiarii placeholders are replaced by one sampled choice (two `MobileConv` blocks,
as the strategy would instantiate), widths are reduced (8/16/24 channels, 64 instead of 1280
classifier inputs), and a plain supervised loop on random 32x32 images replaces the Retiarii
evaluator; the model classes and `forward` keep the example's code.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

BN_MOMENTUM = 1 - 0.9997
_BN_MOMENTUM = 1 - 0.9997


class MobileConv(nn.Module):
    def __init__(self, kernel_size, in_ch, out_ch, skip, exp_ratio, stride):
        super().__init__()
        self.kernel_size = kernel_size
        self.in_ch = in_ch
        self.out_ch = out_ch
        self.skip = skip
        self.exp_ratio = exp_ratio
        self.stride = stride
        mid_ch = in_ch * exp_ratio
        self.layers = nn.Sequential(
            # Pointwise
            nn.Conv2d(in_ch, mid_ch, 1, bias=False),
            nn.BatchNorm2d(mid_ch, momentum=BN_MOMENTUM),
            nn.ReLU(inplace=True),
            # Depthwise
            nn.Conv2d(mid_ch, mid_ch, kernel_size, padding=(kernel_size - 1) // 2,
                      stride=stride, groups=mid_ch, bias=False),
            nn.BatchNorm2d(mid_ch, momentum=BN_MOMENTUM),
            nn.ReLU(inplace=True),
            # Linear pointwise. Note that there's no activation.
            nn.Conv2d(mid_ch, out_ch, 1, bias=False),
            nn.BatchNorm2d(out_ch, momentum=BN_MOMENTUM))

    def forward(self, x):
        out = self.layers(x)
        if self.skip == 'identity':
            out = out + x
        return out


class MNASNet(nn.Module):
    def __init__(self, alpha, sampled_blocks, num_classes=1000, dropout=0.2, last_channels=1280):
        super().__init__()
        assert alpha > 0.0
        self.alpha = alpha
        self.num_classes = num_classes
        first_depth = sampled_blocks[0].in_ch
        layers = [
            # First layer: regular conv.
            nn.Conv2d(3, first_depth, 3, padding=1, stride=2, bias=False),
            nn.BatchNorm2d(first_depth, momentum=_BN_MOMENTUM),
            nn.ReLU(inplace=True),
        ]
        layers += sampled_blocks  # the mutated placeholders
        layers += [
            # Final mapping to classifier input.
            nn.Conv2d(sampled_blocks[-1].out_ch, last_channels, 1, padding=0, stride=1, bias=False),
            nn.BatchNorm2d(last_channels, momentum=_BN_MOMENTUM),
            nn.ReLU(inplace=True),
        ]
        self.layers = nn.Sequential(*layers)
        self.classifier = nn.Sequential(nn.Dropout(p=dropout, inplace=True),
                                        nn.Linear(last_channels, num_classes))
        self._initialize_weights()

    def forward(self, x):
        x = self.layers(x)
        # Equivalent to global avgpool and removing H and W dimensions.
        x = x.mean([2, 3])
        x = F.relu(x)
        return self.classifier(x)

    def _initialize_weights(self):
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)
            elif isinstance(m, nn.Linear):
                nn.init.kaiming_uniform_(m.weight, mode="fan_out", nonlinearity="sigmoid")
                nn.init.zeros_(m.bias)


def train_epoch(model, device, train_loader, optimizer, epoch):
    loss_fn = torch.nn.CrossEntropyLoss()
    model.train()
    for batch_idx, (data, target) in enumerate(train_loader):
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        output = model(data)
        loss = loss_fn(output, target)
        loss.backward()  # expect: GG103
        optimizer.step()
        print('Train Epoch: {} [{}]\tLoss: {:.6f}'.format(epoch, batch_idx, loss.item()))


if __name__ == '__main__':
    torch.manual_seed(0)
    blocks = [MobileConv(3, 8, 16, 'no', 3, 1), MobileConv(3, 16, 24, 'no', 3, 2)]
    model = MNASNet(0.25, blocks, num_classes=10, dropout=0.2, last_channels=64)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    train_loader = [(torch.rand(4, 3, 32, 32), torch.randint(0, 10, (4,))) for _ in range(2)]
    for epoch in range(2):
        train_epoch(model, 'cpu', train_loader, optimizer, epoch)
