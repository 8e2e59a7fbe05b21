# Source: https://iquanku.com/read/th-fastai-book/spilt.2.20b17a5a56ea9b6f.md
"""fastbook chapter 18 ("CNN Interpretation with CAM", mirrored on iquanku): Grad-CAM stores the body's activations
with a forward `Hook` and their gradients with a `HookBwd` on `learn.model[0]`, then backwards the class score.
`output.backward()` on the rank-2 batch of scores fails; fixed as the chapter does: backward the score of one
image and one class, `output[0, cls].backward()`, whose gradient the backward hook stores.
A small CNN stands in for the pets ResNet learner, random images for the cat picture; `HookBwd` uses
`register_full_backward_hook`, the current name of the book's deprecated `register_backward_hook`.
"""
import torch
from torch import nn


class Hook():
    def __init__(self, m):
        self.hook = m.register_forward_hook(self.hook_func)

    def hook_func(self, m, i, o):
        self.stored = o.detach().clone()

    def __enter__(self, *args):
        return self

    def __exit__(self, *args):
        self.hook.remove()


class HookBwd():
    def __init__(self, m):
        self.hook = m.register_full_backward_hook(self.hook_func)

    def hook_func(self, m, gi, go):
        self.stored = go[0].detach().clone()

    def __enter__(self, *args):
        return self

    def __exit__(self, *args):
        self.hook.remove()


class Learner:
    """Stand-in for fastai's cnn_learner: model[0] is the body, model[1] the head."""
    def __init__(self):
        body = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 16, 3, padding=1), nn.ReLU())
        head = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 2))
        self.model = nn.Sequential(body, head)


learn = Learner()
x = torch.randn(2, 3, 16, 16)  # the decoded cat picture, as a batch

cls = 1
with HookBwd(learn.model[0]) as hookg:
    with Hook(learn.model[0]) as hook:
        output = learn.model.eval()(x)
        act = hook.stored
    output[0, cls].backward()
    grad = hookg.stored

w = grad[0].mean(dim=[1, 2], keepdim=True)
cam_map = (w * act[0]).sum(0)
print(cam_map.shape)
