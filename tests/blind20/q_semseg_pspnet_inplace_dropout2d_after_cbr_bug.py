# Source: https://github.com/meetps/pytorch-semseg/issues/121
"""pytorch-semseg (meetps), ptsemseg/models/pspnet.py: PSPNet defines
`self.dropout = nn.Dropout2d(p=0.1, inplace=True)` and applies it to the output of
`conv2DBatchNormRelu` blocks (`convbnrelu4_aux` for the auxiliary head, `cbr_final` for the main
head), whose last layer is `nn.ReLU(inplace=True)`. ReLU saves its output for the backward; the
in-place Dropout2d then overwrites it, so `loss.backward()` in train.py raises "one of the
variables needed for gradient computation has been modified by an inplace operation" (the issue:
"Can't backward with pspnet, because of an in-place modified variable. When I change the model to
segnet it works").

Fix (in the _ok twin, as given in the thread): `nn.Dropout2d(p=0.1, inplace=False)`.

Stand-ins: channel widths divided by 16 and one bottleneck per residual stage (the repository
uses [3, 4, 23, 3] blocks and 2048 channels), a 64x64 random dataset with 4 classes, plain CPU
model without DataParallel or visdom; the building blocks (conv2DBatchNormRelu, bottleNeckPSP,
residualBlockPSP, pyramidPooling), pspnet.forward, multi_scale_cross_entropy2d and the train.py
loop keep the repository's code (`size_average=` is spelled `reduction=` for F.cross_entropy).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


# ---- ptsemseg/models/utils.py ----
class conv2DBatchNorm(nn.Module):
    def __init__(self, in_channels, n_filters, k_size, stride, padding, bias=True, dilation=1, with_bn=True):
        super(conv2DBatchNorm, self).__init__()
        conv_mod = nn.Conv2d(int(in_channels), int(n_filters), kernel_size=k_size, padding=padding,
                             stride=stride, bias=bias, dilation=dilation)
        if with_bn:
            self.cb_unit = nn.Sequential(conv_mod, nn.BatchNorm2d(int(n_filters)))
        else:
            self.cb_unit = nn.Sequential(conv_mod)

    def forward(self, inputs):
        outputs = self.cb_unit(inputs)
        return outputs


class conv2DBatchNormRelu(nn.Module):
    def __init__(self, in_channels, n_filters, k_size, stride, padding, bias=True, dilation=1, with_bn=True):
        super(conv2DBatchNormRelu, self).__init__()
        conv_mod = nn.Conv2d(int(in_channels), int(n_filters), kernel_size=k_size, padding=padding,
                             stride=stride, bias=bias, dilation=dilation)
        if with_bn:
            self.cbr_unit = nn.Sequential(conv_mod, nn.BatchNorm2d(int(n_filters)), nn.ReLU(inplace=True))
        else:
            self.cbr_unit = nn.Sequential(conv_mod, nn.ReLU(inplace=True))

    def forward(self, inputs):
        outputs = self.cbr_unit(inputs)
        return outputs


class pyramidPooling(nn.Module):
    def __init__(self, in_channels, pool_sizes, model_name="pspnet", fusion_mode="cat", with_bn=True):
        super(pyramidPooling, self).__init__()
        bias = not with_bn
        self.paths = []
        for i in range(len(pool_sizes)):
            self.paths.append(conv2DBatchNormRelu(in_channels, int(in_channels / len(pool_sizes)), 1, 1, 0,
                                                  bias=bias, with_bn=with_bn))
        self.path_module_list = nn.ModuleList(self.paths)
        self.pool_sizes = pool_sizes
        self.model_name = model_name
        self.fusion_mode = fusion_mode

    def forward(self, x):
        h, w = x.shape[2:]
        k_sizes = []
        strides = []
        for pool_size in self.pool_sizes:
            k_sizes.append((int(h / pool_size), int(w / pool_size)))
            strides.append((int(h / pool_size), int(w / pool_size)))
        output_slices = [x]
        for i, (module, pool_size) in enumerate(zip(self.path_module_list, self.pool_sizes)):
            out = F.avg_pool2d(x, k_sizes[i], stride=strides[i], padding=0)
            out = module(out)
            out = F.upsample(out, size=(h, w), mode="bilinear")
            output_slices.append(out)
        return torch.cat(output_slices, dim=1)


class bottleNeckPSP(nn.Module):
    def __init__(self, in_channels, mid_channels, out_channels, stride, dilation=1, with_bn=True):
        super(bottleNeckPSP, self).__init__()
        bias = not with_bn
        self.cbr1 = conv2DBatchNormRelu(in_channels, mid_channels, 1, stride=1, padding=0, bias=bias, with_bn=with_bn)
        self.cbr2 = conv2DBatchNormRelu(mid_channels, mid_channels, 3, stride=stride, padding=dilation, bias=bias,
                                        dilation=dilation, with_bn=with_bn)
        self.cb3 = conv2DBatchNorm(mid_channels, out_channels, 1, stride=1, padding=0, bias=bias, with_bn=with_bn)
        self.cb4 = conv2DBatchNorm(in_channels, out_channels, 1, stride=stride, padding=0, bias=bias, with_bn=with_bn)

    def forward(self, x):
        conv = self.cb3(self.cbr2(self.cbr1(x)))
        residual = self.cb4(x)
        return F.relu(conv + residual, inplace=True)


class residualBlockPSP(nn.Module):
    def __init__(self, n_blocks, in_channels, mid_channels, out_channels, stride, dilation=1, with_bn=True):
        super(residualBlockPSP, self).__init__()
        if dilation > 1:
            stride = 1
        layers = [bottleNeckPSP(in_channels, mid_channels, out_channels, stride, dilation, with_bn=with_bn)]
        self.layers = nn.Sequential(*layers)

    def forward(self, x):
        return self.layers(x)


# ---- ptsemseg/loss.py ----
def cross_entropy2d(input, target, weight=None, size_average=True):
    n, c, h, w = input.size()
    nt, ht, wt = target.size()
    if h < ht and w < wt:  # upsample images
        input = F.upsample(input, size=(ht, wt), mode="bilinear")
    elif h != ht and w != wt:
        raise Exception("Only support upsampling")
    input = input.transpose(1, 2).transpose(2, 3).contiguous().view(-1, c)
    target = target.view(-1)
    loss = F.cross_entropy(input, target, weight=weight, reduction="mean" if size_average else "sum",
                           ignore_index=250)
    return loss


def multi_scale_cross_entropy2d(input, target, weight=None, size_average=True, scale_weight=None):
    # Auxiliary training for PSPNet [1.0, 0.4] and ICNet [1.0, 0.4, 0.16]
    if scale_weight == None:  # scale_weight: torch tensor type
        n_inp = len(input)
        scale = 0.4
        scale_weight = torch.pow(scale * torch.ones(n_inp), torch.arange(n_inp))

    loss = 0.0
    for i, inp in enumerate(input):
        loss = loss + scale_weight[i] * cross_entropy2d(input=inp, target=target, weight=weight,
                                                        size_average=size_average)
    return loss


# ---- ptsemseg/models/pspnet.py ----
class pspnet(nn.Module):
    def __init__(self, n_classes=21, block_config=[1, 1, 1, 1], input_size=(64, 64), version=None):
        super(pspnet, self).__init__()
        self.block_config = block_config
        self.n_classes = n_classes
        self.input_size = input_size

        # Encoder
        self.convbnrelu1_1 = conv2DBatchNormRelu(in_channels=3, k_size=3, n_filters=4, padding=1, stride=2, bias=False)
        self.convbnrelu1_2 = conv2DBatchNormRelu(in_channels=4, k_size=3, n_filters=4, padding=1, stride=1, bias=False)
        self.convbnrelu1_3 = conv2DBatchNormRelu(in_channels=4, k_size=3, n_filters=8, padding=1, stride=1, bias=False)

        # Vanilla Residual Blocks
        self.res_block2 = residualBlockPSP(self.block_config[0], 8, 4, 16, 1, 1)
        self.res_block3 = residualBlockPSP(self.block_config[1], 16, 8, 32, 2, 1)

        # Dilated Residual Blocks
        self.res_block4 = residualBlockPSP(self.block_config[2], 32, 16, 64, 1, 2)
        self.res_block5 = residualBlockPSP(self.block_config[3], 64, 32, 128, 1, 4)

        # Pyramid Pooling Module
        self.pyramid_pooling = pyramidPooling(128, [6, 3, 2, 1])

        # Final conv layers
        self.cbr_final = conv2DBatchNormRelu(256, 32, 3, 1, 1, False)
        self.dropout = nn.Dropout2d(p=0.1, inplace=True)
        self.classification = nn.Conv2d(32, self.n_classes, 1, 1, 0)

        # Auxiliary layers for training
        self.convbnrelu4_aux = conv2DBatchNormRelu(in_channels=64, k_size=3, n_filters=16, padding=1, stride=1, bias=False)
        self.aux_cls = nn.Conv2d(16, self.n_classes, 1, 1, 0)

        # Define auxiliary loss function
        self.loss = multi_scale_cross_entropy2d

    def forward(self, x):
        inp_shape = x.shape[2:]

        # H, W -> H/2, W/2
        x = self.convbnrelu1_1(x)
        x = self.convbnrelu1_2(x)
        x = self.convbnrelu1_3(x)

        # H/2, W/2 -> H/4, W/4
        x = F.max_pool2d(x, 3, 2, 1)

        # H/4, W/4 -> H/8, W/8
        x = self.res_block2(x)
        x = self.res_block3(x)
        x = self.res_block4(x)

        # Auxiliary layers for training
        x_aux = self.convbnrelu4_aux(x)
        x_aux = self.dropout(x_aux)
        x_aux = self.aux_cls(x_aux)

        x = self.res_block5(x)

        x = self.pyramid_pooling(x)

        x = self.cbr_final(x)
        x = self.dropout(x)

        x = self.classification(x)
        x = F.upsample(x, size=inp_shape, mode="bilinear")

        if self.training:
            return x_aux, x
        else:  # eval mode
            return x


# ---- train.py ----
def train(n_epoch=2, n_classes=4):
    torch.manual_seed(0)
    device = torch.device("cpu")
    trainloader = [(torch.rand(2, 3, 64, 64), torch.randint(0, n_classes, (2, 64, 64))) for _ in range(2)]

    model = pspnet(n_classes=n_classes).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-5, momentum=0.99, weight_decay=5e-4)

    if hasattr(model, "loss"):
        print("Using custom loss")
        loss_fn = model.loss
    else:
        loss_fn = cross_entropy2d

    for epoch in range(n_epoch):
        model.train()
        for i, (images, labels) in enumerate(trainloader):
            images = images.to(device)
            labels = labels.to(device)

            optimizer.zero_grad()
            outputs = model(images)

            loss = loss_fn(input=outputs, target=labels)

            loss.backward()  # expect: GG103
            optimizer.step()

            print("Epoch [%d/%d] Loss: %.4f" % (epoch + 1, n_epoch, loss.item()))


if __name__ == "__main__":
    train()
