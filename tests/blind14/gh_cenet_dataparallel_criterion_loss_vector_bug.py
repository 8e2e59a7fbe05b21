# Source: https://github.com/huixiancheng/CENet/issues/8
"""CENet's Trainer (LiDAR range-image segmentation) on 2 GPUs: with more than one GPU it wraps the
model and also the losses (`self.criterion = nn.DataParallel(NLLLoss)`, `self.ls =
nn.DataParallel(Lovasz_softmax)`: "loss as dataparallel too"), so each criterion returns one 0-d
loss per replica gathered into a vector, and train_epoch's `scaler.scale(loss_m).backward()` raises
"grad can be implicitly created only for scalar outputs" (the reporter, 4 GPUs). The author had
dropped lidar-bonnetal's multi-GPU backward for the AMP one; the repository's later code backwards
`loss_m.sum()`. Two CUDA replicas are simulated on CPU by a DataParallel stand-in (chunk, run,
gather: 0-d outputs stacked into a vector, as torch's gather does); the GradScaler, autocast, the
KITTI parser, ResNet_34 and the Lovasz/boundary losses are small stand-ins written here.
"""
import contextlib

import torch
import torch.nn as nn
import torch.nn.functional as F


class DataParallel(nn.Module):
    """Stand-in for nn.DataParallel over 2 devices: scatter along dim 0, replicate, gather."""
    def __init__(self, module, device_ids=(0, 1)):
        super().__init__()
        self.module = module
        self.device_ids = list(device_ids)

    def forward(self, *inputs):
        chunks = [inp.chunk(len(self.device_ids)) for inp in inputs]
        outputs = [self.module(*args) for args in zip(*chunks)]
        if outputs[0].dim() == 0:
            # "Was asked to gather along dimension 0, but all input tensors were scalars;
            #  will instead unsqueeze and return a vector."
            return torch.stack(outputs)
        return torch.cat(outputs, 0)


class GradScaler:
    """Stand-in for torch.cuda.amp.GradScaler."""
    def __init__(self, init_scale=2. ** 4):
        self._scale = torch.tensor(init_scale)

    def scale(self, outputs):
        return outputs * self._scale

    def step(self, optimizer):
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p.grad.div_(self._scale)
        optimizer.step()

    def update(self):
        pass


def autocast():
    return contextlib.nullcontext()


class AverageMeter:
    def __init__(self):
        self.sum, self.count, self.avg = 0., 0, 0.

    def update(self, val, n=1):
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


class ResNet_34(nn.Module):
    """Stand-in for CENet's ResNet_34: range image (5 channels) to per-pixel class probabilities."""
    def __init__(self, nclasses, aux=False):
        super().__init__()
        self.conv1 = nn.Conv2d(5, 16, 3, padding=1)
        self.bn = nn.BatchNorm2d(16)
        self.semantic_output = nn.Conv2d(16, nclasses, 1)

    def forward(self, x):
        x = F.leaky_relu(self.bn(self.conv1(x)))
        return F.softmax(self.semantic_output(x), dim=1)


class Lovasz_softmax(nn.Module):
    """Stand-in for the Lovasz-softmax loss: a soft Jaccard loss over the non-ignored classes."""
    def __init__(self, ignore=None):
        super().__init__()
        self.ignore = ignore

    def forward(self, probas, labels):
        onehot = F.one_hot(labels, probas.size(1)).permute(0, 3, 1, 2).float()
        inter = (probas * onehot).sum((0, 2, 3))
        union = (probas + onehot - probas * onehot).sum((0, 2, 3))
        jacc = 1. - inter / union.clamp(min=1e-6)
        keep = torch.arange(probas.size(1)) != self.ignore
        return jacc[keep].mean()


class BoundaryLoss(nn.Module):
    """Stand-in for CENet's boundary loss (scalar)."""
    def forward(self, pred, gt):
        onehot = F.one_hot(gt, pred.size(1)).permute(0, 3, 1, 2).float()
        pb = F.max_pool2d(1 - pred, 3, 1, 1) - (1 - pred)
        gb = F.max_pool2d(1 - onehot, 3, 1, 1) - (1 - onehot)
        return 1. - (2 * (pb * gb).sum() + 1.) / (pb.sum() + gb.sum() + 1.)


class Parser:
    """Stand-in for dataset.kitti.parser.Parser: random range images and labels."""
    def __init__(self, n_classes=4, batch_size=4, n_batches=3):
        self.n_classes, self.batch_size, self.n_batches = n_classes, batch_size, n_batches

    def get_n_classes(self):
        return self.n_classes

    def get_train_set(self):
        for _ in range(self.n_batches):
            in_vol = torch.randn(self.batch_size, 5, 8, 16)
            proj_mask = torch.ones(self.batch_size, 8, 16)
            proj_labels = torch.randint(0, self.n_classes, (self.batch_size, 8, 16))
            yield in_vol, proj_mask, proj_labels


class Trainer():
    def __init__(self, ARCH, n_gpus=2):
        self.ARCH = ARCH
        self.parser = Parser(batch_size=ARCH["train"]["batch_size"])
        content = torch.tensor([0.05, 0.5, 0.3, 0.15])
        self.loss_w = 1 / (content + ARCH["train"]["epsilon_w"])
        self.loss_w[0] = 0   # ignore class 0
        with torch.no_grad():
            self.model = ResNet_34(self.parser.get_n_classes(), ARCH["train"]["aux_loss"])
        self.gpu = True
        self.multi_gpu = False
        self.n_gpus = 1
        self.model_single = self.model
        if n_gpus > 1:
            print("Let's use", n_gpus, "GPUs!")
            self.model = DataParallel(self.model)  # spread in gpus
            self.model_single = self.model.module
            self.multi_gpu = True
            self.n_gpus = n_gpus
        self.criterion = nn.NLLLoss(weight=self.loss_w)
        self.ls = Lovasz_softmax(ignore=0)
        self.bd = BoundaryLoss()
        # loss as dataparallel too (more images in batch)
        if self.n_gpus > 1:
            self.criterion = DataParallel(self.criterion)  # spread in gpus
            self.ls = DataParallel(self.ls)
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=ARCH["train"]["decay"]["lr"],
                                         momentum=ARCH["train"]["momentum"],
                                         weight_decay=ARCH["train"]["w_decay"])

    def train(self):
        for epoch in range(self.ARCH["train"]["max_epochs"]):
            loss = self.train_epoch(train_loader=self.parser.get_train_set(), model=self.model,
                                    criterion=self.criterion, optimizer=self.optimizer, epoch=epoch)
            print("epoch", epoch, "loss", loss)

    def train_epoch(self, train_loader, model, criterion, optimizer, epoch):
        losses = AverageMeter()
        scaler = GradScaler()
        model.train()
        for i, (in_vol, proj_mask, proj_labels) in enumerate(train_loader):
            proj_labels = proj_labels.long()
            # compute output
            with autocast():
                output = model(in_vol)
                bdlosss = self.bd(output, proj_labels.long())
                loss_m = criterion(torch.log(output.clamp(min=1e-8)), proj_labels) \
                    + 1.5 * self.ls(output, proj_labels.long()) + bdlosss

            optimizer.zero_grad()
            scaler.scale(loss_m).backward()  # expect: GG105
            scaler.step(optimizer)
            scaler.update()

            # measure accuracy and record loss
            loss = loss_m.mean()
            losses.update(loss.item(), in_vol.size(0))
        return losses.avg


ARCH = {"train": {"batch_size": 4, "epsilon_w": 0.001, "aux_loss": False, "max_epochs": 2,
                  "momentum": 0.9, "w_decay": 0.0001, "decay": {"lr": 0.01}}}
trainer = Trainer(ARCH, n_gpus=2)
trainer.train()
