# Source: https://github.com/winycg/L-MCL/issues/1
"""L-MCL (winycg, main_layer_mcl_cifar_meta.py) run on two GPUs: besides the network, the script
wraps its contrastive criterion in torch.nn.DataParallel (`criterion_mcl =
torch.nn.DataParallel(criterion_mcl)`). Each replica returns its chunk's four scalar losses, which
DataParallel gathers into vectors of two, so `loss = loss_cls + loss_logit_kd + loss_mcl` is a
vector and train()'s loss.backward() fails ("grad can be implicitly created only for scalar
outputs"). The train step is the repository's (its loss loops written as sums), without the
meta-optimisation branch; a two-branch two-stage CNN, a small supervised contrastive criterion
with the same four outputs, the aggregator and a DataParallel stand-in that scatters and gathers
as torch does stand in for the models and losses packages, with random CIFAR-sized batches."""
from types import SimpleNamespace

import torch
import torch.nn as nn
import torch.nn.functional as F


def scatter(obj, chunks):
    if isinstance(obj, torch.Tensor):
        return list(obj.chunk(chunks))
    parts = [scatter(o, chunks) for o in obj]  # nested lists of tensors
    return [type(obj)(p[i] for p in parts) for i in range(chunks)]


def gather(outputs):
    first = outputs[0]
    if isinstance(first, (tuple, list)):
        return type(first)(gather([o[i] for o in outputs]) for i in range(len(first)))
    if first.dim() == 0:
        return torch.stack(outputs)  # "all input tensors were scalars; will instead unsqueeze"
    return torch.cat(outputs, dim=0)


class DataParallel(nn.Module):
    def __init__(self, module, device_ids=(0, 1)):
        super().__init__()
        self.module = module
        self.device_ids = list(device_ids)

    def forward(self, *inputs):
        chunks = [scatter(x, len(self.device_ids)) for x in inputs]
        return gather([self.module(*(c[i] for c in chunks)) for i in range(len(self.device_ids))])


class TwoStageNet(nn.Module):
    def __init__(self, num_classes=10, number_net=2, dim=8):
        super().__init__()
        self.stage1 = nn.ModuleList([nn.Conv2d(3, dim, 3, stride=2, padding=1) for _ in range(number_net)])
        self.stage2 = nn.ModuleList([nn.Conv2d(dim, dim, 3, stride=2, padding=1) for _ in range(number_net)])
        self.fc1 = nn.ModuleList([nn.Linear(dim, num_classes) for _ in range(number_net)])
        self.fc2 = nn.ModuleList([nn.Linear(dim, num_classes) for _ in range(number_net)])

    def forward(self, x):
        embeddings, logits = [], []
        for s1, s2, f1, f2 in zip(self.stage1, self.stage2, self.fc1, self.fc2):
            h1 = F.relu(s1(x))
            h2 = F.relu(s2(h1))
            e1, e2 = h1.mean(dim=(2, 3)), h2.mean(dim=(2, 3))
            embeddings.append([e1, e2])
            logits.append([f1(e1), f2(e2)])
        return embeddings, logits


class Sup_MCL_Loss_Meta(nn.Module):
    """Vanilla and interactive contrastive losses between the networks' last-stage embeddings,
    hard and soft (weighted)."""
    def __init__(self, args):
        super().__init__()
        self.embed = nn.ModuleList([nn.Linear(d[-1], 8) for d in args.feat_dims])
        self.T = 0.1

    def contrast(self, a, b, targets, weights):
        sim = a @ b.t() / self.T
        same = (targets[:, None] == targets[None, :]).float()
        log_prob = sim - torch.logsumexp(sim, dim=1, keepdim=True)
        hard = -(same * log_prob).sum(1) / same.sum(1)
        return hard.mean(), (weights * hard).mean()

    def forward(self, embeddings, targets, weights):
        z = [F.normalize(proj(e[-1]), dim=1) for proj, e in zip(self.embed, embeddings)]
        loss_vcl, loss_soft_vcl = self.contrast(z[0], z[0], targets, weights)
        loss_icl, loss_soft_icl = self.contrast(z[0], z[1], targets, weights)
        return loss_vcl, loss_soft_vcl, loss_icl, loss_soft_icl


class Aggregator(nn.Module):
    def __init__(self, dim_in, num_classes=10):
        super().__init__()
        self.fc = nn.ModuleList([nn.Linear(d, num_classes) for d in dim_in])

    def forward(self, embeddings, logits):
        return [fc(e[-1]) + l[-1] for fc, e, l in zip(self.fc, embeddings, logits)]


class DistillKL(nn.Module):
    def __init__(self, T):
        super().__init__()
        self.T = T

    def forward(self, y_s, y_t):
        p_s = F.log_softmax(y_s / self.T, dim=1)
        p_t = F.softmax(y_t / self.T, dim=1)
        return F.kl_div(p_s, p_t, reduction='batchmean') * self.T ** 2


args = SimpleNamespace(number_net=2, number_stage=2, alpha=0.1, gamma=1., beta=0.1, lam=1., kd_T=3,
                       feat_dims=[[8, 8], [8, 8]], rep_dim=[8, 8])
net = DataParallel(TwoStageNet(number_net=args.number_net))
criterion_mcl = Sup_MCL_Loss_Meta(args)
aggregator = Aggregator(dim_in=args.rep_dim)
trainable_list = nn.ModuleList([net, criterion_mcl, aggregator])
optimizer = torch.optim.SGD(trainable_list.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4, nesterov=True)
criterion_mcl = DataParallel(criterion_mcl)
aggregator = DataParallel(aggregator)
criterion_list = nn.ModuleList([nn.CrossEntropyLoss(), DistillKL(args.kd_T), criterion_mcl, aggregator])
trainloader = [(torch.randn(8, 3, 16, 16), torch.arange(8) % 4) for _ in range(2)]


def train(epoch, criterion_list):
    criterion_ce, criterion_div, criterion_mcl, aggregator = criterion_list
    net.train()
    for batch_idx, (inputs, targets) in enumerate(trainloader):
        optimizer.zero_grad()
        embeddings, logits = net(inputs)
        weights = torch.ones(inputs.size(0))  # LossWeightNetwork(embeddings) under no_grad

        aggregated_logits = aggregator(embeddings, logits)
        loss_cls = sum(criterion_ce(logits[i][j], targets)
                       for i in range(len(logits)) for j in range(args.number_stage)) \
            + sum(criterion_ce(aggregated_logits[i], targets) for i in range(len(logits)))
        loss_logit_kd = sum(criterion_div(logits[i][-1], aggregated_logits[j].detach())
                            for i in range(len(logits)) for j in range(len(logits)))

        loss_vcl, loss_soft_vcl, loss_icl, loss_soft_icl = criterion_mcl(embeddings, targets, weights)
        loss_mcl = args.alpha * loss_vcl + args.gamma * loss_soft_vcl \
            + args.beta * loss_icl + args.lam * loss_soft_icl

        loss = loss_cls + loss_logit_kd + loss_mcl
        loss.backward()  # expect: GG105
        optimizer.step()
        print('Epoch:{}, batch_idx:{}, loss:{:.4f}'.format(epoch, batch_idx, loss.item()))


for epoch in range(2):
    train(epoch, criterion_list)
