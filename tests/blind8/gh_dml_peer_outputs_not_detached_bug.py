# Source: https://github.com/chxy95/Deep-Mutual-Learning/issues/5
"""Deep-Mutual-Learning's Trainer.train_one_epoch (trainer.py) as the reporter reproduced the
procedure: both networks are run on the batch, then each in turn is trained on its cross-entropy
plus the KL divergence to its peer's prediction, F.softmax(outputs[j]), with the peer's output
not detached (the repository wraps it in Variable(), which in torch 2.13 makes a detached copy, so
the repository's own code runs). Model 1's loss.backward() then also walks model 2's forward and
frees it, and model 2's own backward needs that graph again: "Trying to backward through the
graph a second time". resnet32 is a small CNN here, CIFAR random images, and the tqdm /
tensorboard logging is left out."""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.autograd import Variable


class AverageMeter(object):
    def __init__(self):
        self.reset()

    def reset(self):
        self.val, self.avg, self.sum, self.count = 0, 0, 0, 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


def accuracy(output, target, topk=(1,)):
    maxk = max(topk)
    batch_size = target.size(0)
    _, pred = output.topk(maxk, 1, True, True)
    pred = pred.t()
    correct = pred.eq(target.view(1, -1).expand_as(pred))
    res = []
    for k in topk:
        correct_k = correct[:k].reshape(-1).float().sum(0)
        res.append(correct_k.mul_(100.0 / batch_size))
    return res


def resnet32(num_classes=10):
    return nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                         nn.Conv2d(8, 16, 3, stride=2, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, num_classes))


class Trainer(object):
    def __init__(self, train_loader, model_num=2, lr=0.1):
        self.train_loader = train_loader
        self.model_num = model_num
        self.models = []
        self.optimizers = []
        self.loss_kl = nn.KLDivLoss(reduction='batchmean')
        self.loss_ce = nn.CrossEntropyLoss()
        for i in range(self.model_num):
            model = resnet32()
            self.models.append(model)
            optimizer = optim.SGD(model.parameters(), lr=lr, momentum=0.9, weight_decay=5e-4, nesterov=True)
            self.optimizers.append(optimizer)

    def train_one_epoch(self, epoch):
        losses = []
        accs = []
        for i in range(self.model_num):
            self.models[i].train()
            losses.append(AverageMeter())
            accs.append(AverageMeter())

        for i, (images, labels) in enumerate(self.train_loader):
            images, labels = Variable(images), Variable(labels)

            # forward pass
            outputs = []
            for model in self.models:
                outputs.append(model(images))
            for i in range(self.model_num):
                ce_loss = self.loss_ce(outputs[i], labels)
                kl_loss = 0
                for j in range(self.model_num):
                    if i != j:
                        kl_loss += self.loss_kl(F.log_softmax(outputs[i], dim=1),
                                                F.softmax(outputs[j], dim=1))
                loss = ce_loss + kl_loss / (self.model_num - 1)

                # measure accuracy and record loss
                prec = accuracy(outputs[i].data, labels.data, topk=(1,))[0]
                losses[i].update(loss.item(), images.size()[0])
                accs[i].update(prec.item(), images.size()[0])

                # compute gradients and update SGD
                self.optimizers[i].zero_grad()
                loss.backward()  # expect: GG101
                self.optimizers[i].step()
        return losses, accs


loader = [(torch.randn(8, 3, 16, 16), torch.randint(0, 10, (8,))) for _ in range(2)]
trainer = Trainer(loader)
for epoch in range(2):
    train_losses, train_accs = trainer.train_one_epoch(epoch)
    print(epoch, [m.avg for m in train_losses], [m.avg for m in train_accs])
