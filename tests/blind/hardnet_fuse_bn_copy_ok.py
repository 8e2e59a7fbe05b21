# Source: https://github.com/PingoLH/FCHarDNet/issues/61
"""FCHarDNet's test.py folds every BatchNorm into the preceding convolution before inference:
the fusion runs under torch.no_grad() (the usual fix for this error), so copying W into the new
conv's parameters is not recorded by autograd."""
import torch
import torch.nn as nn


class ConvLayer(nn.Sequential):
    def __init__(self, in_channels, out_channels, kernel=3, stride=1):
        super().__init__()
        self.add_module("conv", nn.Conv2d(in_channels, out_channels, kernel, stride, kernel // 2, bias=False))
        self.add_module("norm", nn.BatchNorm2d(out_channels))
        self.add_module("relu", nn.ReLU(inplace=True))


def fuse_bn_recursively(model):
    for name, module in model.named_children():
        if isinstance(module, ConvLayer):
            conv, bn = module.conv, module.norm
            cconv = nn.Conv2d(conv.in_channels, conv.out_channels, conv.kernel_size, conv.stride,
                              conv.padding, bias=True)
            scale = bn.weight / torch.sqrt(bn.running_var + bn.eps)
            W = conv.weight * scale.view(-1, 1, 1, 1)
            cconv.weight[:, :, :, :] = W[:, :, :, :]
            cconv.bias[:] = bn.bias - bn.running_mean * scale
            setattr(model, name, nn.Sequential(cconv, nn.ReLU(inplace=True)))
        else:
            fuse_bn_recursively(module)
    return model


model = nn.Sequential(ConvLayer(3, 8, stride=2), ConvLayer(8, 8), nn.Conv2d(8, 4, 1))
model.eval()
with torch.no_grad():
    model = fuse_bn_recursively(model)
with torch.no_grad():
    print(model(torch.randn(1, 3, 16, 16)).shape)
