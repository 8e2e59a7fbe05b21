# Source: https://github.com/Turoad/lanedet/issues/78
"""lanedet's Runner (Turoad, lanedet/engine/runner.py) trained with `--gpus 0 1`: the network is
wrapped in MMDataParallel, each replica returns its batch chunk's scalar loss inside the output
dict, and gathering those 0-d tensors gives a vector with one loss per GPU (torch warns "Was
asked to gather along dimension 0, but all input tensors were scalars; will instead unsqueeze
and return a vector"). train_epoch backwards output['loss'] as it is: "grad can be implicitly
created only for scalar outputs". Runner.train_epoch is the repository's; a small DataParallel
stand-in (scatter the batch over two replicas, gather the outputs as torch does), a conv
segmentation detector with its loss in the head, and random lane batches stand in for MMCV,
the RESA network and the OpenLane loader."""
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


def scatter(batch, chunks):
    parts = {k: v.chunk(chunks) for k, v in batch.items()}
    return [{k: v[i] for k, v in parts.items()} for i in range(chunks)]


def gather(outputs):
    first = outputs[0]
    if isinstance(first, dict):
        return {k: gather([o[k] for o in outputs]) for k in first}
    if first.dim() == 0:
        return torch.stack(outputs)  # "all input tensors were scalars; will instead unsqueeze"
    return torch.cat(outputs, dim=0)


class MMDataParallel(nn.Module):
    """Runs the module on one chunk of the batch per device and gathers the outputs on dim 0."""
    def __init__(self, module, device_ids):
        super().__init__()
        self.module = module
        self.device_ids = list(device_ids)

    def forward(self, batch):
        return gather([self.module(part) for part in scatter(batch, len(self.device_ids))])


class LaneSegHead(nn.Module):
    def __init__(self, channels, num_classes):
        super().__init__()
        self.conv = nn.Conv2d(channels, num_classes, kernel_size=1)
        self.exist = nn.Linear(channels, num_classes - 1)

    def forward(self, fea):
        return {'seg': self.conv(fea), 'exist': self.exist(fea.mean(dim=(2, 3)))}

    def loss(self, output, batch):
        seg_loss = F.cross_entropy(output['seg'], batch['mask'])
        exist_loss = F.binary_cross_entropy_with_logits(output['exist'], batch['lane_exist'])
        loss = seg_loss + 0.1 * exist_loss
        return {'loss': loss, 'loss_stats': {'seg_loss': seg_loss, 'exist_loss': exist_loss}}


class Detector(nn.Module):
    def __init__(self, channels=8, num_classes=5):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, channels, 3, padding=1), nn.ReLU(),
                                      nn.Conv2d(channels, channels, 3, padding=1), nn.ReLU())
        self.heads = LaneSegHead(channels, num_classes)

    def forward(self, batch):
        fea = self.backbone(batch['img'])
        output = self.heads(fea)
        if self.training:
            output.update(self.heads.loss(output, batch))
        return output


class Recorder(object):
    def __init__(self):
        self.step = 0
        self.loss_stats = {}

    def update_loss_stats(self, loss_dict):
        for k, v in loss_dict.items():
            self.loss_stats[k] = v.mean().item()


class Runner(object):
    def __init__(self, cfg):
        self.cfg = cfg
        self.recorder = Recorder()
        self.net = MMDataParallel(Detector(), device_ids=range(self.cfg['gpus']))
        self.optimizer = torch.optim.SGD(self.net.parameters(), lr=0.025, momentum=0.9)

    def train_epoch(self, epoch, train_loader):
        self.net.train()
        end = time.time()
        for i, data in enumerate(train_loader):
            if self.recorder.step >= self.cfg['total_iter']:
                break
            self.recorder.step += 1
            output = self.net(data)
            self.optimizer.zero_grad()
            loss = output['loss']
            loss.backward()  # expect: GG105
            self.optimizer.step()
            batch_time = time.time() - end
            end = time.time()
            self.recorder.update_loss_stats(output['loss_stats'])
            print(epoch, i, self.recorder.loss_stats, round(batch_time, 3))


def random_lane_batch(batch_size=4, size=8, num_classes=5):
    return {'img': torch.randn(batch_size, 3, size, size),
            'mask': torch.randint(0, num_classes, (batch_size, size, size)),
            'lane_exist': torch.randint(0, 2, (batch_size, num_classes - 1)).float()}


runner = Runner({'gpus': 2, 'total_iter': 6})
train_loader = [random_lane_batch() for _ in range(3)]
for epoch in range(2):
    runner.train_epoch(epoch, train_loader)
