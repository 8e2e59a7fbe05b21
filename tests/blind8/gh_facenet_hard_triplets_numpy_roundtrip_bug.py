# Source: https://github.com/liorshk/facenet_pytorch/issues/9
"""facenet_pytorch's train_triplet.py training loop: the anchor, positive and negative
embeddings are compared, the hard triplets picked in numpy, and the selected embeddings rebuilt
with Variable(torch.from_numpy(out_a.cpu().data.numpy()[hard_triplets])), new tensors with no
graph behind them. The triplet loss on them has no grad_fn, and loss.backward() raises. As the
reporter's error requires, the loss is the triplet loss alone (the repository also adds a
classifier's cross-entropy on the selected images, which keeps a graph). FaceModel is a small
CNN with the repository's scaled L2-normalised embedding; random faces stand in for the
TripletFaceDataset, and .cuda() is dropped."""
import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim
from torch.autograd import Variable

MARGIN = 0.5
LR, LR_DECAY = 0.1, 1e-4


class PairwiseDistance:
    def __init__(self, p):
        self.norm = p

    def forward(self, x1, x2):
        assert x1.size() == x2.size()
        eps = 1e-4 / x1.size(1)
        diff = torch.abs(x1 - x2)
        out = torch.pow(diff, self.norm).sum(dim=1)
        return torch.pow(out + eps, 1. / self.norm)


class TripletMarginLoss:
    """Triplet loss function."""

    def __init__(self, margin):
        self.margin = margin
        self.pdist = PairwiseDistance(2)  # norm 2

    def forward(self, anchor, positive, negative):
        d_p = self.pdist.forward(anchor, positive)
        d_n = self.pdist.forward(anchor, negative)
        dist_hinge = torch.clamp(self.margin + d_p - d_n, min=0.0)
        loss = torch.mean(dist_hinge)
        return loss


class FaceModel(nn.Module):
    def __init__(self, embedding_size, num_classes):
        super(FaceModel, self).__init__()
        self.model = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.ReLU(),
                                   nn.Conv2d(8, 16, 3, stride=2, padding=1), nn.ReLU(),
                                   nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.embedding_size = embedding_size
        self.fc = nn.Linear(16, self.embedding_size)
        self.classifier = nn.Linear(self.embedding_size, num_classes)

    def l2_norm(self, input):
        input_size = input.size()
        buffer = torch.pow(input, 2)
        normp = torch.sum(buffer, 1).add_(1e-10)
        norm = torch.sqrt(normp)
        _output = torch.div(input, norm.view(-1, 1).expand_as(input))
        return _output.view(input_size)

    def forward(self, x):
        x = self.fc(self.model(x))
        self.features = self.l2_norm(x)
        alpha = 10
        self.features = self.features * alpha
        return self.features


def adjust_learning_rate(optimizer):
    for group in optimizer.param_groups:
        if 'step' not in group:
            group['step'] = 0
        group['step'] += 1
        group['lr'] = LR / (1 + group['step'] * LR_DECAY)


l2_dist = PairwiseDistance(2)


def train(train_loader, model, optimizer, epoch):
    model.train()
    for batch_idx, (data_a, data_p, data_n, label_p, label_n) in enumerate(train_loader):
        data_a, data_p, data_n = Variable(data_a), Variable(data_p), Variable(data_n)

        # compute output
        out_a, out_p, out_n = model(data_a), model(data_p), model(data_n)

        # Choose the hard negatives
        d_p = l2_dist.forward(out_a, out_p)
        d_n = l2_dist.forward(out_a, out_n)
        all = (d_n - d_p < MARGIN).cpu().data.numpy().flatten()
        hard_triplets = np.where(all == 1)
        if len(hard_triplets[0]) == 0:
            continue
        out_selected_a = Variable(torch.from_numpy(out_a.cpu().data.numpy()[hard_triplets]))
        out_selected_p = Variable(torch.from_numpy(out_p.cpu().data.numpy()[hard_triplets]))
        out_selected_n = Variable(torch.from_numpy(out_n.cpu().data.numpy()[hard_triplets]))

        triplet_loss = TripletMarginLoss(MARGIN).forward(out_selected_a, out_selected_p, out_selected_n)
        loss = triplet_loss
        # compute gradient and update weights
        optimizer.zero_grad()
        loss.backward()  # expect: GG104
        optimizer.step()

        # update the optimizer learning rate
        adjust_learning_rate(optimizer)
        print('Train Epoch: {} [{}]\tLoss: {:.6f} \t # of Selected Triplets: {}'.format(
            epoch, batch_idx, loss.item(), len(hard_triplets[0])))


def triplet_loader(n, batch_size=8, num_classes=5):
    return [(torch.randn(batch_size, 3, 24, 24), torch.randn(batch_size, 3, 24, 24),
             torch.randn(batch_size, 3, 24, 24), torch.randint(0, num_classes, (batch_size,)),
             torch.randint(0, num_classes, (batch_size,))) for _ in range(n)]


np.random.seed(0)
model = FaceModel(embedding_size=16, num_classes=5)
optimizer = optim.Adagrad(model.parameters(), lr=LR, lr_decay=LR_DECAY, weight_decay=0.0)
for epoch in range(2):
    train(triplet_loader(2), model, optimizer, epoch)
