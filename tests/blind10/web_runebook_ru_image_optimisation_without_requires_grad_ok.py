# Source: https://runebook.dev/ru/docs/pytorch/generated/torch.tensor.requires_grad_
"""The page's fix: turn on gradient tracking for the hand-made image with requires_grad_(), so
the loss has a graph back to it while the classifier stays frozen."""
import torch
import torch.nn as nn

torch.manual_seed(0)


def make_classifier():
    net = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 5))
    for p in net.parameters():
        p.requires_grad = False
    return net.eval()


def visualise_class(net, target_class, steps=3, lr=0.1):
    image = torch.rand(1, 3, 8, 8).requires_grad_()
    optimizer = torch.optim.SGD([image], lr=lr)
    for step in range(steps):
        optimizer.zero_grad()
        score = net(image)[0, target_class]
        loss = -score + 0.01 * image.pow(2).sum()
        loss.backward()
        optimizer.step()
        print(step, loss.item())
    return image


visualise_class(make_classifier(), target_class=2)
