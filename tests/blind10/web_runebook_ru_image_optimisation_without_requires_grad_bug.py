# Source: https://runebook.dev/ru/docs/pytorch/generated/torch.tensor.requires_grad_
"""The Russian runebook page "Typical mistakes and best practices when working with gradients in
PyTorch": "if you create a tensor by hand (for example, to optimise a picture) and forget to turn
on requires_grad, loss.backward() raises an error or the gradient is None"; the fix is
requires_grad_() on that tensor. A class-visualisation loop that optimises an input image against
a frozen classifier: the image is made by hand without requires_grad and the classifier's weights
are frozen, so the loss has no graph and its backward raises."""
import torch
import torch.nn as nn

torch.manual_seed(0)


def make_classifier():
    net = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(4, 5))
    for p in net.parameters():
        p.requires_grad = False
    return net.eval()


def visualise_class(net, target_class, steps=3, lr=0.1):
    image = torch.rand(1, 3, 8, 8)
    optimizer = torch.optim.SGD([image], lr=lr)
    for step in range(steps):
        optimizer.zero_grad()
        score = net(image)[0, target_class]
        loss = -score + 0.01 * image.pow(2).sum()
        loss.backward()  # expect: GG104
        optimizer.step()
        print(step, loss.item())
    return image


visualise_class(make_classifier(), target_class=2)
