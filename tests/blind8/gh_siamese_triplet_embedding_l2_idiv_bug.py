# Source: https://github.com/adambielski/siamese-triplet/issues/51
"""siamese-triplet's triplet training (networks.py, losses.py, trainer.py) with EmbeddingNetL2 in
place of EmbeddingNet, as the reporter switched: its forward normalises the embedding with
`output /= output.pow(2).sum(1, keepdim=True).sqrt()`, dividing in place the fc output that
pow() saved for its backward ("output 0 of AddmmBackward, is at version 1; expected version 0"),
so train_epoch's loss.backward() raises. Random 28x28 triplets stand in for the triplet MNIST
loader; trainer.py's loss.data[0] and Variable wrappers are written as torch 2 reads them."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class EmbeddingNet(nn.Module):
    def __init__(self):
        super(EmbeddingNet, self).__init__()
        self.convnet = nn.Sequential(nn.Conv2d(1, 32, 5), nn.PReLU(),
                                     nn.MaxPool2d(2, stride=2),
                                     nn.Conv2d(32, 64, 5), nn.PReLU(),
                                     nn.MaxPool2d(2, stride=2))
        self.fc = nn.Sequential(nn.Linear(64 * 4 * 4, 256),
                                nn.PReLU(),
                                nn.Linear(256, 256),
                                nn.PReLU(),
                                nn.Linear(256, 2))

    def forward(self, x):
        output = self.convnet(x)
        output = output.view(output.size()[0], -1)
        output = self.fc(output)
        return output

    def get_embedding(self, x):
        return self.forward(x)


class EmbeddingNetL2(EmbeddingNet):
    def __init__(self):
        super(EmbeddingNetL2, self).__init__()

    def forward(self, x):
        output = super(EmbeddingNetL2, self).forward(x)
        output /= output.pow(2).sum(1, keepdim=True).sqrt()
        return output

    def get_embedding(self, x):
        return self.forward(x)


class TripletNet(nn.Module):
    def __init__(self, embedding_net):
        super(TripletNet, self).__init__()
        self.embedding_net = embedding_net

    def forward(self, x1, x2, x3):
        output1 = self.embedding_net(x1)
        output2 = self.embedding_net(x2)
        output3 = self.embedding_net(x3)
        return output1, output2, output3

    def get_embedding(self, x):
        return self.embedding_net(x)


class TripletLoss(nn.Module):
    def __init__(self, margin):
        super(TripletLoss, self).__init__()
        self.margin = margin

    def forward(self, anchor, positive, negative, size_average=True):
        distance_positive = (anchor - positive).pow(2).sum(1)  # .pow(.5)
        distance_negative = (anchor - negative).pow(2).sum(1)  # .pow(.5)
        losses = F.relu(distance_positive - distance_negative + self.margin)
        return losses.mean() if size_average else losses.sum()


def train_epoch(train_loader, model, loss_fn, optimizer, log_interval):
    model.train()
    losses = []
    total_loss = 0

    for batch_idx, (data, target) in enumerate(train_loader):
        target = target if len(target) > 0 else None
        if not type(data) in (tuple, list):
            data = (data,)

        optimizer.zero_grad()
        outputs = model(*data)

        if type(outputs) not in (tuple, list):
            outputs = (outputs,)

        loss_inputs = outputs
        if target is not None:
            target = (target,)
            loss_inputs += target

        loss_outputs = loss_fn(*loss_inputs)
        loss = loss_outputs[0] if type(loss_outputs) in (tuple, list) else loss_outputs
        losses.append(loss.item())
        total_loss += loss.item()
        loss.backward()  # expect: GG103
        optimizer.step()

        if batch_idx % log_interval == 0:
            print('Train: [{}]\tLoss: {:.6f}'.format(batch_idx, np.mean(losses)))
            losses = []

    total_loss /= (batch_idx + 1)
    return total_loss


def triplet_batches(n, batch_size=4):
    """(anchor, positive, negative) image batches and no target, as TripletMNIST yields them."""
    return [((torch.randn(batch_size, 1, 28, 28), torch.randn(batch_size, 1, 28, 28),
              torch.randn(batch_size, 1, 28, 28)), []) for _ in range(n)]


margin = 1.
embedding_net = EmbeddingNetL2()
model = TripletNet(embedding_net)
loss_fn = TripletLoss(margin)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(2):
    print(epoch, train_epoch(triplet_batches(2), model, loss_fn, optimizer, log_interval=1))
