# Source: https://github.com/cfzd/Ultra-Fast-Lane-Detection/issues/282
"""Ultra-Fast-Lane-Detection's train.py with the freezing the reporter settled on: only the backbone
(net.model) is frozen, and the optimizer gets the parameters that still require grad (the
maintainer's filter), so the head trains."""
import torch
import torch.nn as nn


class ParsingNet(nn.Module):
    def __init__(self, num_gridding=5, num_cls_per_lane=4, num_lanes=2):
        super().__init__()
        self.dim = (num_gridding + 1, num_cls_per_lane, num_lanes)
        self.model = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.ReLU(),
                                   nn.Conv2d(8, 8, 3, stride=2, padding=1), nn.ReLU())  # backbone
        self.pool = nn.Conv2d(8, 2, 1)
        self.cls = nn.Sequential(nn.Linear(2 * 4 * 4, 32), nn.ReLU(), nn.Linear(32, 6 * 4 * 2))

    def forward(self, x):
        fea = self.pool(self.model(x)).view(x.shape[0], -1)
        return self.cls(fea).view(-1, *self.dim)


net = ParsingNet()
model = net
finetune = True
if finetune:
    state_all = {k: v.clone() for k, v in ParsingNet().state_dict().items()}  # torch.load(cfg.finetune)['model']
    state_clip = {k: v for k, v in state_all.items() if "model" in k}  # only use backbone parameters
    net.load_state_dict(state_clip, strict=False)
    for param in net.model.parameters():
        param.requires_grad = False

optimizer = torch.optim.SGD(filter(lambda p: p.requires_grad, net.parameters()), lr=0.1, momentum=0.9)
criterion = nn.CrossEntropyLoss()
for b_idx in range(2):
    imgs = torch.randn(2, 3, 16, 16)
    cls_label = torch.randint(0, 6, (2, 4, 2))
    cls_out = net(imgs)
    loss = criterion(cls_out, cls_label)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
