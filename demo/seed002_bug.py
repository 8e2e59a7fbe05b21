"""A trainer whose pre-handling step extracts features with gradient tracking switched on."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Trainer:
    def __init__(self, in_dim=8, num_classes=4):
        self.model = nn.Sequential(nn.Linear(in_dim, 16), nn.ReLU(), nn.Linear(16, num_classes))
        self.feature_extractor = nn.Sequential(nn.Linear(in_dim, num_classes), nn.Tanh())
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=0.01)
        self.prev_ft = None

    def compute_accuracy(self, s, y):
        return (s.argmax(dim=1) == y).float().mean().item()

    def compute_loss(self, s, y):
        # classification loss plus a consistency term against the first frame's features
        return F.cross_entropy(s, y) + 0.1 * F.mse_loss(s, self.prev_ft)

    def train(self, loader):
        for j, batch in enumerate(loader, 1):
            images, label = batch
            self.optimizer.zero_grad()
            # pre-handle some thing
            self.prev_ft = self.feature_extractor(images[0])
            for i in range(1, len(images)):
                s = self.model(images[i])
                y = label[i]
                acc = self.compute_accuracy(s.detach(), y)
                loss = self.compute_loss(s, y)
                loss.backward()  # expect: GG101
            self.optimizer.step()


def make_loader(num_batches=2, frames=3, batch_size=4, in_dim=8, num_classes=4):
    loader = []
    for _ in range(num_batches):
        images = [torch.randn(batch_size, in_dim) for _ in range(frames)]
        label = [torch.randint(0, num_classes, (batch_size,)) for _ in range(frames)]
        loader.append((images, label))
    return loader


if __name__ == "__main__":
    trainer = Trainer()
    trainer.train(make_loader())
