# Source: https://github.com/iArunava/scratchai/pull/39
"""scratchai's Fast Gradient Method (scratchai/attacks/attacks/fast_gradient_method.py) before the
pull request: fgm() makes its input a leaf that requires grad, `x.clone().detach()
.requires_grad_(True)`, and only then, for a single 3-D image with no label given, unsqueezes it
into a batch. The unsqueezed x is no longer the leaf, so after loss.backward() `x.grad` is None
(torch warns that .grad of a non-leaf is read) and optimize_linear(None, ...) fails. The FGM class
is used as the module intends, as a transform on one image; the frozen classifier is a small CNN
in place of the pretrained alexnet, and the image is random."""
import numpy as np
import torch
import torch.nn as nn


def freeze(net):
    for p in net.parameters():
        p.requires_grad_(False)


def optimize_linear(grads, eps, ordr):
    """Solves for optimal input to a linear function under a norm constraint."""
    red_ind = list(range(1, len(grads.size())))
    if ordr == np.inf:
        opt_pert = torch.sign(grads)
    elif ordr == 1:
        abs_grad = torch.abs(grads)
        sign = torch.sign(grads)
        ori_shape = [1] * len(grads.size())
        ori_shape[0] = grads.size(0)
        max_abs_grad, _ = torch.max(abs_grad.view(grads.size(0), -1), 1)
        max_mask = abs_grad.eq(max_abs_grad.view(ori_shape)).float()
        num_ties = max_mask
        for red_scalar in red_ind:
            num_ties = torch.sum(num_ties, red_scalar, keepdim=True)
        opt_pert = sign * max_mask / num_ties
    else:
        raise NotImplementedError('Only L-inf and L1 norms are currently implemented.')
    return opt_pert * eps


def fgm(x, net: nn.Module, eps: float = 0.3, ordr=np.inf, y=None,
        clip_min=None, clip_max=None, targeted=False, sanity_checks=True):
    if ordr not in [np.inf, 1, 2]:
        raise ValueError('Norm order must be either np.inf, 1, or 2.')

    # x needs to have requires_grad set to True
    # for its grad to be computed and stored properly in a backward call
    x = x.clone().detach().requires_grad_(True)
    if y is None:
        # Inplace operations not working for some bug #15070
        # TODO Update when fixed
        if len(x.shape) == 3: x = x.unsqueeze(0)
        _, y = torch.max(net(x), dim=1)

    # Compute loss
    crit = nn.CrossEntropyLoss()
    loss = crit(net(x), y)
    # If attack is targeted, minimize loss of target label rather than maximize
    # loss of correct label.
    if targeted:
        loss = -loss

    # Define gradient of loss wrt input
    loss.backward()
    opt_pert = optimize_linear(x.grad, eps, ordr)  # expect: GG106

    # Add perturbation to original example to obtain adversarial example
    adv_x = x + opt_pert

    # If clipping is needed, reset all values outside of [clip_min, clip_max]
    if (clip_min is not None) or (clip_max is not None):
        assert clip_min is not None and clip_max is not None
        adv_x = torch.clamp(adv_x, clip_min, clip_max)
    return adv_x


class FGM():
    """So this attack can be directly used along with torchvision.transforms."""

    def __init__(self, net, **kwargs):
        self.net = net
        self.kwargs = kwargs

    def __call__(self, x):
        return fgm(x, self.net, **self.kwargs)


net = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                    nn.Flatten(), nn.Linear(8, 10))
net.eval()
freeze(net)
img = torch.rand(3, 32, 32)  # one normalised image, as the transforms pipeline hands it over
true_pred = int(torch.argmax(net(img.unsqueeze(0)), dim=1))
adv_x = FGM(net, eps=0.3)(img)
adv_pred = int(torch.argmax(net(adv_x), dim=1))
print(true_pred, adv_pred)
