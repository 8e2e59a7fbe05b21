# Source: https://blog.csdn.net/weixin_43507369/article/details/103728562
"""The article's rule: a tensor saved for backward must not be changed in place before the
backward. The decode step clamps out of place (a new tensor), so the squared boxes the loss saved
stay at their version."""
import torch
import torch.nn as nn

torch.manual_seed(0)


class BoxHead(nn.Module):
    def __init__(self, n_feat=10, n_anchor=3):
        super().__init__()
        self.n_anchor = n_anchor
        self.fc = nn.Linear(n_feat, n_anchor * 4)

    def forward(self, feats):
        return self.fc(feats).view(-1, self.n_anchor, 4)


class YoloBoxLoss:
    def __init__(self, offset=2.0):
        self.offset = offset

    def __call__(self, pred, target):
        shifted = pred + self.offset
        t = target + self.offset
        # squared error written out term by term, as hand-made YOLO losses often are
        loss = (shifted * shifted).mean() - 2 * (shifted * t).mean() + (t * t).mean()
        return loss, shifted


def decode(shifted, max_wh=3.0):
    # decode for the logger: widths/heights clamped into a new tensor
    return torch.cat([shifted[..., :2], shifted[..., 2:].clamp(max=max_wh)], dim=-1)


head = BoxHead()
criterion = YoloBoxLoss()
optimizer = torch.optim.SGD(head.parameters(), lr=0.01)
batches = [(torch.randn(4, 10), torch.rand(4, 3, 4)) for _ in range(3)]

for step, (feats, target) in enumerate(batches):
    optimizer.zero_grad()
    pred = head(feats)
    loss, shifted = criterion(pred, target)
    boxes = decode(shifted)
    loss.backward()
    optimizer.step()
    print(step, loss.item(), boxes[0, 0].tolist())
