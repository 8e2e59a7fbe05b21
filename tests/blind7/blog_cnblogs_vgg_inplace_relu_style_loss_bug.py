# Source: https://cnblogs.com/zx-y/p/10848356.html
"""The cnblogs post "RuntimeError: one of the variables needed for gradient computation has been
modified by an inplace": the ReLUs of VGG default to inplace=True, and when the VGG structure is
reused the post says they must be switched to inplace=False or backward raises this error. Here
the VGG is reused for neural style transfer: content and style loss modules sit after conv layers
and compute their loss from the conv output when it passes through; the next ReLU(inplace=True)
then overwrites that output, which the Gram matrix and the MSE saved. A VGG-shaped stand-in for
torchvision's vgg19().features (same layer kinds, tiny widths, random weights) and a few
optimisation steps on a random image."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def vgg_features():
    """Stand-in for torchvision.models.vgg19().features: conv, ReLU(inplace=True), max-pool."""
    cfg = [8, 8, 'M', 16, 16, 'M']
    layers, in_ch = [], 3
    for v in cfg:
        if v == 'M':
            layers.append(nn.MaxPool2d(2, 2))
        else:
            layers += [nn.Conv2d(in_ch, v, 3, padding=1), nn.ReLU(inplace=True)]
            in_ch = v
    return nn.Sequential(*layers)


def gram_matrix(input):
    b, c, h, w = input.size()
    features = input.view(b * c, h * w)
    G = torch.mm(features, features.t())
    return G.div(b * c * h * w)


class ContentLoss(nn.Module):
    def __init__(self, target):
        super().__init__()
        self.target = target.detach()

    def forward(self, input):
        self.loss = F.mse_loss(input, self.target)
        return input


class StyleLoss(nn.Module):
    def __init__(self, target_feature):
        super().__init__()
        self.target = gram_matrix(target_feature).detach()

    def forward(self, input):
        G = gram_matrix(input)
        self.loss = F.mse_loss(G, self.target)
        return input


def get_style_model_and_losses(cnn, style_img, content_img,
                               content_layers=('conv_3',), style_layers=('conv_1', 'conv_2', 'conv_3', 'conv_4')):
    model = nn.Sequential()
    content_losses, style_losses = [], []
    i = 0
    for layer in cnn.children():
        if isinstance(layer, nn.Conv2d):
            i += 1
            name = 'conv_{}'.format(i)
        elif isinstance(layer, nn.ReLU):
            name = 'relu_{}'.format(i)
        else:
            name = 'pool_{}'.format(i)
        model.add_module(name, layer)
        if name in content_layers:
            target = model(content_img).detach()
            content_loss = ContentLoss(target)
            model.add_module("content_loss_{}".format(i), content_loss)
            content_losses.append(content_loss)
        if name in style_layers:
            target_feature = model(style_img).detach()
            style_loss = StyleLoss(target_feature)
            model.add_module("style_loss_{}".format(i), style_loss)
            style_losses.append(style_loss)
    return model, style_losses, content_losses


cnn = vgg_features().eval()
for p in cnn.parameters():
    p.requires_grad_(False)
content_img = torch.rand(1, 3, 16, 16)
style_img = torch.rand(1, 3, 16, 16)
input_img = content_img.clone().requires_grad_(True)

model, style_losses, content_losses = get_style_model_and_losses(cnn, style_img, content_img)
optimizer = torch.optim.Adam([input_img], lr=0.05)
style_weight, content_weight = 1e4, 1.0
for step in range(5):
    optimizer.zero_grad()
    model(input_img)
    style_score = sum(sl.loss for sl in style_losses)
    content_score = sum(cl.loss for cl in content_losses)
    loss = style_weight * style_score + content_weight * content_score
    loss.backward()  # expect: GG103
    optimizer.step()
    with torch.no_grad():
        input_img.clamp_(0, 1)
print(loss.item())
