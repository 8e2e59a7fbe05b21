# Source: https://blog.csdn.net/weixin_43507369/article/details/103728562
"""The CSDN article "PyTorch 的 Autograd" warns that a hand-written loss (its example: YOLO's,
which PyTorch does not ship) easily trips over in-place operations, and shows the version check:
b = a + 2; loss = (b * b).mean(); b[0] = 1000.0; loss.backward() raises "one of the variables
needed for gradient computation has been modified by an inplace operation", because b * b saved
b. A tiny YOLO-style box head whose loss squares the shifted box predictions and whose decode
step then writes the clamped widths back into the same tensor before the backward."""
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


def decode_(shifted, max_wh=3.0):
    # decode for the logger: widths/heights clamped, written back into the prediction tensor
    shifted[..., 2:] = shifted[..., 2:].clamp(max=max_wh)
    return shifted


head = BoxHead()
criterion = YoloBoxLoss()
optimizer = torch.optim.SGD(head.parameters(), lr=0.01)
batches = [(torch.randn(4, 10), torch.rand(4, 3, 4)) for _ in range(3)]

for step, (feats, target) in enumerate(batches):
    optimizer.zero_grad()
    pred = head(feats)
    loss, shifted = criterion(pred, target)
    boxes = decode_(shifted)
    loss.backward()  # expect: GG103
    optimizer.step()
    print(step, loss.item(), boxes[0, 0].tolist())
