# Source: https://github.com/abhiskk/fast-neural-style/issues/12
"""fast-neural-style: after adding `nn.Tanh()` as the last layer of TransformerNet, training fails in
total_loss.backward() with "one of the variables needed for gradient computation has been modified
by an inplace operation".

In train(), the stylised batch `y = transformer(x)` goes through
`utils.subtract_imagenet_mean_batch(y)`, which does `batch -= Variable(mean)` in place before VGG.
Without the Tanh, y is a convolution output that nothing saved; with the Tanh, TanhBackward saves
its output y to compute its gradient, and the in-place subtraction overwrites it. The maintainer's
fix (commit b5e3a47 "Remove inplace subtraction", branch tanh-fix): make the helper out of place,
`batch = batch.sub(Variable(mean)); return batch`, and use `y = utils.subtract_imagenet_mean_batch(y)`.
Channels and image size are shrunk, VGG16 has random weights, the ImageFolder loader is random
images; `volatile=True` and `.data[0]` from PyTorch 0.1 are dropped / replaced by .item().
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable
from torch.optim import Adam


# ---- utils.py ----
def gram_matrix(y):
    (b, ch, h, w) = y.size()
    features = y.view(b, ch, w * h)
    features_t = features.transpose(1, 2)
    gram = features.bmm(features_t) / (ch * h * w)
    return gram


def subtract_imagenet_mean_batch(batch):
    tensortype = type(batch.data)
    mean = tensortype(batch.data.size())
    mean[:, 0, :, :] = 103.939
    mean[:, 1, :, :] = 116.779
    mean[:, 2, :, :] = 123.680
    batch -= Variable(mean)


def preprocess_batch(batch):
    batch = batch.transpose(0, 1)
    (r, g, b) = torch.chunk(batch, 3)
    batch = torch.cat((b, g, r))
    batch = batch.transpose(0, 1)
    return batch


# ---- transformer_net.py ----
class ConvLayer(torch.nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride):
        super(ConvLayer, self).__init__()
        reflection_padding = int(np.floor(kernel_size / 2))
        self.reflection_pad = nn.ReflectionPad2d(reflection_padding)
        self.conv2d = nn.Conv2d(in_channels, out_channels, kernel_size, stride)

    def forward(self, x):
        out = self.reflection_pad(x)
        out = self.conv2d(out)
        return out


class InstanceNormalization(torch.nn.Module):
    def __init__(self, dim, eps=1e-9):
        super(InstanceNormalization, self).__init__()
        self.scale = nn.Parameter(torch.FloatTensor(dim))
        self.shift = nn.Parameter(torch.FloatTensor(dim))
        self.eps = eps
        self._reset_parameters()

    def _reset_parameters(self):
        self.scale.data.uniform_()
        self.shift.data.zero_()

    def forward(self, x):
        n = x.size(2) * x.size(3)
        t = x.view(x.size(0), x.size(1), n)
        mean = torch.mean(t, 2).unsqueeze(2).unsqueeze(3).expand_as(x)
        var = torch.var(t, 2).unsqueeze(2).unsqueeze(3).expand_as(x) * ((n - 1) / float(n))
        scale_broadcast = self.scale.unsqueeze(1).unsqueeze(1).unsqueeze(0)
        scale_broadcast = scale_broadcast.expand_as(x)
        shift_broadcast = self.shift.unsqueeze(1).unsqueeze(1).unsqueeze(0)
        shift_broadcast = shift_broadcast.expand_as(x)
        out = (x - mean) / torch.sqrt(var + self.eps)
        out = out * scale_broadcast + shift_broadcast
        return out


class ResidualBlock(torch.nn.Module):
    def __init__(self, channels):
        super(ResidualBlock, self).__init__()
        self.conv1 = ConvLayer(channels, channels, kernel_size=3, stride=1)
        self.in1 = InstanceNormalization(channels)
        self.conv2 = ConvLayer(channels, channels, kernel_size=3, stride=1)
        self.in2 = InstanceNormalization(channels)
        self.relu = nn.ReLU()

    def forward(self, x):
        residual = x
        out = self.relu(self.in1(self.conv1(x)))
        out = self.in2(self.conv2(out))
        out = out + residual
        return out


class UpsampleConvLayer(torch.nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride, upsample=None):
        super(UpsampleConvLayer, self).__init__()
        self.upsample = upsample
        if upsample:
            self.upsample_layer = torch.nn.UpsamplingNearest2d(scale_factor=upsample)
        reflection_padding = int(np.floor(kernel_size / 2))
        self.reflection_pad = nn.ReflectionPad2d(reflection_padding)
        self.conv2d = nn.Conv2d(in_channels, out_channels, kernel_size, stride)

    def forward(self, x):
        x_in = x
        if self.upsample:
            x_in = self.upsample_layer(x_in)
        out = self.reflection_pad(x_in)
        out = self.conv2d(out)
        return out


class TransformerNet(torch.nn.Module):
    def __init__(self):
        super(TransformerNet, self).__init__()
        self.conv1 = ConvLayer(3, 8, kernel_size=9, stride=1)
        self.in1 = InstanceNormalization(8)
        self.conv2 = ConvLayer(8, 16, kernel_size=3, stride=2)
        self.in2 = InstanceNormalization(16)
        self.conv3 = ConvLayer(16, 32, kernel_size=3, stride=2)
        self.in3 = InstanceNormalization(32)
        self.res1 = ResidualBlock(32)
        self.res2 = ResidualBlock(32)
        self.deconv1 = UpsampleConvLayer(32, 16, kernel_size=3, stride=1, upsample=2)
        self.in4 = InstanceNormalization(16)
        self.deconv2 = UpsampleConvLayer(16, 8, kernel_size=3, stride=1, upsample=2)
        self.in5 = InstanceNormalization(8)
        self.deconv3 = ConvLayer(8, 3, kernel_size=9, stride=1)
        self.relu = nn.ReLU()
        self.tanh = nn.Tanh()   # the reporter's addition

    def forward(self, X):
        in_X = X
        y = self.relu(self.in1(self.conv1(in_X)))
        y = self.relu(self.in2(self.conv2(y)))
        y = self.relu(self.in3(self.conv3(y)))
        y = self.res1(y)
        y = self.res2(y)
        y = self.relu(self.in4(self.deconv1(y)))
        y = self.relu(self.in5(self.deconv2(y)))
        y = self.deconv3(y)
        y = self.tanh(y)
        return y


# ---- vgg16.py (narrowed) ----
class Vgg16(torch.nn.Module):
    def __init__(self):
        super(Vgg16, self).__init__()
        self.conv1_1 = nn.Conv2d(3, 8, kernel_size=3, stride=1, padding=1)
        self.conv1_2 = nn.Conv2d(8, 8, kernel_size=3, stride=1, padding=1)
        self.conv2_1 = nn.Conv2d(8, 16, kernel_size=3, stride=1, padding=1)
        self.conv2_2 = nn.Conv2d(16, 16, kernel_size=3, stride=1, padding=1)
        self.conv3_1 = nn.Conv2d(16, 16, kernel_size=3, stride=1, padding=1)
        self.conv4_1 = nn.Conv2d(16, 16, kernel_size=3, stride=1, padding=1)

    def forward(self, X):
        h = F.relu(self.conv1_1(X))
        h = F.relu(self.conv1_2(h))
        relu1_2 = h
        h = F.max_pool2d(h, kernel_size=2, stride=2)
        h = F.relu(self.conv2_1(h))
        h = F.relu(self.conv2_2(h))
        relu2_2 = h
        h = F.max_pool2d(h, kernel_size=2, stride=2)
        h = F.relu(self.conv3_1(h))
        relu3_3 = h
        h = F.max_pool2d(h, kernel_size=2, stride=2)
        h = F.relu(self.conv4_1(h))
        relu4_3 = h
        return [relu1_2, relu2_2, relu3_3, relu4_3]


# ---- neural_style.py train() ----
class Args(object):
    seed = 42
    image_size = 32
    batch_size = 2
    lr = 1e-3
    epochs = 1
    content_weight = 1.0
    style_weight = 5.0
    log_interval = 1


def train(args):
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)

    train_loader = [(torch.rand(args.batch_size, 3, args.image_size, args.image_size) * 255, None)
                    for _ in range(2)]

    transformer = TransformerNet()
    optimizer = Adam(transformer.parameters(), args.lr)
    mse_loss = torch.nn.MSELoss()

    vgg = Vgg16()

    style = torch.rand(3, args.image_size, args.image_size) * 255
    style = style.repeat(args.batch_size, 1, 1, 1)
    style = preprocess_batch(style)
    style_v = Variable(style)
    subtract_imagenet_mean_batch(style_v)
    features_style = vgg(style_v)
    gram_style = [gram_matrix(y) for y in features_style]

    for e in range(args.epochs):
        transformer.train()
        agg_content_loss = 0.
        agg_style_loss = 0.
        count = 0
        for batch_id, (x, _) in enumerate(train_loader):
            n_batch = len(x)
            count += n_batch
            optimizer.zero_grad()
            x = Variable(preprocess_batch(x))

            y = transformer(x)

            xc = Variable(x.data.clone())

            subtract_imagenet_mean_batch(y)
            subtract_imagenet_mean_batch(xc)

            features_y = vgg(y)
            features_xc = vgg(xc)

            f_xc_c = Variable(features_xc[1].data, requires_grad=False)

            content_loss = args.content_weight * mse_loss(features_y[1], f_xc_c)

            style_loss = 0.
            for m in range(len(features_y)):
                gram_s = Variable(gram_style[m].data, requires_grad=False)
                gram_y = gram_matrix(features_y[m])
                style_loss += args.style_weight * mse_loss(gram_y, gram_s[:n_batch, :, :])

            total_loss = content_loss + style_loss
            total_loss.backward()  # expect: GG103
            optimizer.step()

            agg_content_loss += content_loss.item()
            agg_style_loss += style_loss.item()

            if (batch_id + 1) % args.log_interval == 0:
                print("Epoch {}:\t[{}]\tcontent: {:.6f}\tstyle: {:.6f}".format(
                    e + 1, count, agg_content_loss / (batch_id + 1), agg_style_loss / (batch_id + 1)))


train(Args())
