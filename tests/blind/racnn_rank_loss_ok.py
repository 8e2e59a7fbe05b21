# Source: https://github.com/dillondavis/RecurrentAttentionConvolutionalNeuralNetwork/issues/4
"""RA-CNN's manager.py do_batch: the pairwise ranking loss between the class probabilities of
consecutive scales is backwarded scale by scale. With batch_size 32 the hinge is one value per
sample; the reporter's modified RankLoss averages it over the batch, so each backward is scalar."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class RankLoss(nn.Module):
    def __init__(self, margin=0.05):
        super().__init__()
        self.margin = margin

    def forward(self, scores1, scores2, target):
        ps1 = F.softmax(scores1, dim=1).gather(1, target.long().view(-1, 1))
        ps2 = F.softmax(scores2, dim=1).gather(1, target.long().view(-1, 1))
        return torch.clamp(ps1 - ps2 + self.margin, min=0).mean()


class RACNN(nn.Module):
    def __init__(self, num_classes=5, scales=3):
        super().__init__()
        self.scales = nn.ModuleList(nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(),
                                                  nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                                                  nn.Linear(4, num_classes)) for _ in range(scales))

    def forward(self, x):
        scores = []
        for i, net in enumerate(self.scales):
            scores.append(net(x))
            x = F.interpolate(x, scale_factor=2.0, mode="bilinear", align_corners=False)
        return scores


class Manager:
    def __init__(self, model):
        self.model = model
        self.criterion_rank = RankLoss()
        self.optimizer = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)

    def do_batch(self, batch, label):
        self.model.zero_grad()
        scores = self.model(batch)
        for i in range(1, len(scores)):
            retain_graph = i < len(scores) - 1
            self.criterion_rank(scores[i - 1], scores[i], label).backward(retain_graph=retain_graph)
        self.optimizer.step()


manager = Manager(RACNN())
for step in range(2):
    manager.do_batch(torch.randn(32, 3, 4, 4), torch.randint(0, 5, (32,)))
