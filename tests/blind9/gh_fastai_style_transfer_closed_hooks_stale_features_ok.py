# Source: https://github.com/fastai/fastai/pull/761
"""fastai's dl2 style-transfer notebook with the pull request's fix: the style-transfer section
creates fresh SaveFeatures hooks (sfs) before computing its content targets, so every forward of
m_vgg stores new activations and comb_loss backwards through the graph of the current LBFGS
evaluation only."""
from functools import partial

import torch
import torch.nn.functional as F
from torch import nn, optim


def children(m):
    return list(m.children())


def vgg_standin():
    layers = []
    for c_in, c_out in [(3, 8), (8, 8), (8, 16), (16, 16)]:
        layers += [nn.Conv2d(c_in, c_out, 3, padding=1), nn.ReLU(inplace=True), nn.MaxPool2d(2)]
    return nn.Sequential(*layers)


class SaveFeatures():
    features = None

    def __init__(self, m):
        self.hook = m.register_forward_hook(self.hook_fn)

    def hook_fn(self, module, input, output):
        self.features = output

    def close(self):
        self.hook.remove()


def gram(input):
    b, c, h, w = input.size()
    x = input.view(b * c, -1)
    return torch.mm(x, x.t()) / input.numel() * 1e6


def gram_mse_loss(input, target):
    return F.mse_loss(gram(input), gram(target))


m_vgg = vgg_standin().eval()
for p in m_vgg.parameters():
    p.requires_grad_(False)
block_ends = [i - 1 for i, o in enumerate(children(m_vgg)) if isinstance(o, nn.MaxPool2d)]

img_tfm = torch.rand(1, 3, 32, 32)
style_tfm = torch.rand(1, 3, 32, 32)
max_iter = 4
n_iter = 0


def get_opt():
    opt_img_v = torch.rand(1, 3, 32, 32).requires_grad_()
    return opt_img_v, optim.LBFGS([opt_img_v], lr=0.5, max_iter=2)


def step(loss_fn):
    global n_iter
    optimizer.zero_grad()
    loss = loss_fn(opt_img_v)
    loss.backward()
    n_iter += 1
    if n_iter % 2 == 0:
        print(f'Iteration: {n_iter}, loss: {loss.item()}')
    return loss


# Style match
opt_img_v, optimizer = get_opt()
sfs = [SaveFeatures(children(m_vgg)[idx]) for idx in block_ends]
m_vgg(style_tfm)
targ_styles = [o.features.clone() for o in sfs]


def style_loss(x):
    m_vgg(opt_img_v)
    outs = [o.features for o in sfs]
    losses = [gram_mse_loss(o, s) for o, s in zip(outs, targ_styles)]
    return sum(losses)


n_iter = 0
while n_iter <= max_iter:
    optimizer.step(partial(step, style_loss))
for sf in sfs:
    sf.close()

# Style transfer
opt_img_v, optimizer = get_opt()
sfs = [SaveFeatures(children(m_vgg)[idx]) for idx in block_ends]
m_vgg(img_tfm)
targ_vs = [o.features.clone() for o in sfs]


def comb_loss(x):
    m_vgg(opt_img_v)
    outs = [o.features for o in sfs]
    losses = [gram_mse_loss(o, s) for o, s in zip(outs, targ_styles)]
    cnt_loss = F.mse_loss(outs[3], targ_vs[3]) * 1000000
    style_loss = sum(losses)
    return cnt_loss + style_loss


n_iter = 0
while n_iter <= max_iter:
    optimizer.step(partial(step, comb_loss))
for sf in sfs:
    sf.close()
