# Source: https://github.com/fossasia/visdom/issues/366
"""visdom #366 "Error in __init__.py def pytorch_wrap(fn)": the reporter calls ``viz.images()``
with a torch Tensor that requires grad (network output during training) and gets "Can't call
numpy() on Variable that requires grad" from visdom's ``pytorch_wrap``, which converts every
torch argument of the plotting methods with ``a.cpu().numpy()``.  Visdom wraps ``images``,
``image``, ``line``, ``scatter``... with it through ``wrap_tensor_methods(Visdom, pytorch_wrap)``.

Fix (PR #370, "Support Tensor that requires grad"): ``pytorch_wrap`` converts with
``a.cpu().detach().numpy()``.  Stand-ins: visdom's ``pytorch_wrap`` / ``wrap_tensor_methods``
and a ``Visdom`` class whose ``images`` builds the grid as visdom does and whose ``image`` /
``line`` keep the payload instead of sending it to a server; the user side is a small
convolutional autoencoder trained on random images that shows its reconstructions every few
steps and plots the loss.
"""
import math

import numpy as np
import torch
import torch.nn as nn


# ---- stand-ins for visdom (py/visdom/__init__.py, mid 2018) ----
def pytorch_wrap(fn):
    def result(*args, **kwargs):
        args = (a.cpu().numpy() if type(a).__module__.startswith('torch') else a for a in args)  # expect: GG107

        for k in kwargs:
            if type(kwargs[k]).__module__.startswith('torch'):
                kwargs[k] = kwargs[k].cpu().numpy()

        return fn(*args, **kwargs)
    return result


def wrap_tensor_methods(cls, wrapper):
    fns = ['image', 'images', 'line', 'scatter', 'heatmap', 'histogram']
    for key in [k for k in dir(cls) if k in fns]:
        setattr(cls, key, wrapper(getattr(cls, key)))


class Visdom(object):
    def __init__(self, env='main'):
        self.env = env
        self.windows = {}

    def image(self, img, win=None, env=None, opts=None):
        self.windows[win or 'image'] = ('image', np.asarray(img, dtype=np.float64))
        return win

    def line(self, Y, X=None, win=None, env=None, opts=None, update=None):
        prev = self.windows.get(win, ('line', np.zeros(0)))[1] if update == 'append' else np.zeros(0)
        self.windows[win or 'line'] = ('line', np.concatenate([prev, np.asarray(Y).ravel()]))
        return win

    def images(self, tensor, nrow=8, padding=2, win=None, env=None, opts=None):
        if isinstance(tensor, list):
            tensor = np.stack(tensor, 0)
        if tensor.ndim == 2:
            tensor = np.expand_dims(tensor, 0)
        if tensor.ndim == 3:
            if tensor.shape[0] == 1:
                tensor = np.repeat(tensor, 3, 0)
            return self.image(tensor, win, env, opts)
        if tensor.ndim == 4 and tensor.shape[1] == 1:
            tensor = np.repeat(tensor, 3, 1)

        nmaps = tensor.shape[0]
        xmaps = min(nrow, nmaps)
        ymaps = int(math.ceil(float(nmaps) / xmaps))
        height = int(tensor.shape[2] + 2 * padding)
        width = int(tensor.shape[3] + 2 * padding)

        grid = np.ones([3, height * ymaps, width * xmaps])
        k = 0
        for y in range(ymaps):
            for x in range(xmaps):
                if k >= nmaps:
                    break
                h_start = y * height + 1 + padding
                h_end = h_start + tensor.shape[2]
                w_start = x * width + 1 + padding
                w_end = w_start + tensor.shape[3]
                grid[:, h_start:h_end, w_start:w_end] = tensor[k]
                k += 1
        return self.image(grid, win, env, opts)


wrap_tensor_methods(Visdom, pytorch_wrap)


# ---- user code ----
class AutoEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv2d(1, 8, 3, stride=2, padding=1), nn.ReLU(),
                                     nn.Conv2d(8, 16, 3, stride=2, padding=1), nn.ReLU())
        self.decoder = nn.Sequential(nn.ConvTranspose2d(16, 8, 4, stride=2, padding=1), nn.ReLU(),
                                     nn.ConvTranspose2d(8, 1, 4, stride=2, padding=1), nn.Sigmoid())

    def forward(self, x):
        return self.decoder(self.encoder(x))


torch.manual_seed(0)
viz = Visdom(env='autoencoder')
model = AutoEncoder()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
criterion = nn.MSELoss()

for step in range(6):
    x = torch.rand(8, 1, 16, 16)
    recon = model(x)
    loss = criterion(recon, x)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

    viz.line(Y=np.array([loss.item()]), X=np.array([step]), win='loss', update='append')
    if step % 3 == 0:
        viz.images(recon, nrow=4, win='reconstructions')

print(sorted(viz.windows))
