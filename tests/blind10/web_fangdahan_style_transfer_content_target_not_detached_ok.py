# Source: https://fangdahan.medium.com/pytorch-style-transfer-tutorial-91e58d6b1055
"""The tutorial's way, as the post explains it: ContentLoss stores target.detach(), a stated
value rather than a variable, so each backward walks only the graph from the input image."""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class Normalization(nn.Module):
    def __init__(self, mean, std):
        super().__init__()
        self.mean = torch.tensor(mean).view(-1, 1, 1)
        self.std = torch.tensor(std).view(-1, 1, 1)

    def forward(self, img):
        return (img - self.mean) / self.std


class ContentLoss(nn.Module):
    def __init__(self, target):
        super().__init__()
        self.target = target.detach()

    def forward(self, input):
        self.loss = F.mse_loss(input, self.target)
        return input


def build_model(cnn, content_img, content_layers=("conv_2",)):
    normalization = Normalization([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])
    model = nn.Sequential(normalization)
    content_losses = []
    i = 0
    for layer in cnn.children():
        if isinstance(layer, nn.Conv2d):
            i += 1
            name = "conv_{}".format(i)
        else:
            name = "relu_{}".format(i)
            layer = nn.ReLU(inplace=False)
        model.add_module(name, layer)
        if name in content_layers:
            target = model(content_img)
            content_loss = ContentLoss(target)
            model.add_module("content_loss_{}".format(i), content_loss)
            content_losses.append(content_loss)
    return model, content_losses


cnn = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 4, 3, padding=1), nn.ReLU())
content_img = torch.rand(1, 3, 8, 8)
input_img = content_img.clone().requires_grad_(True)
model, content_losses = build_model(cnn, content_img)
optimizer = torch.optim.Adam([input_img], lr=0.05)

for step in range(3):
    optimizer.zero_grad()
    model(input_img)
    loss = sum(cl.loss for cl in content_losses)
    loss.backward()
    optimizer.step()
    print(step, loss.item())
