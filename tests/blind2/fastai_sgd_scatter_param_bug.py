# Source: https://github.com/fastai/course-v3/issues/455
"""fastai course-v3 lesson2-sgd.ipynb: a line y = x@a is fitted by hand-written SGD with
a = nn.Parameter(a), and after training the notebook plots plt.scatter(x[:,0], x@a), handing
matplotlib a tensor that requires grad ("Can't call numpy() on Variable that requires grad"; the
fix in the thread: compute it under torch.no_grad()). matplotlib is not installed here, so the
conversion scatter performs on its y values (np.asarray) stands in for plt.scatter."""
import numpy as np
import torch
from torch import nn

n = 100
x = torch.ones(n, 2)
x[:, 0].uniform_(-1., 1)
a = torch.tensor([3., 2])  # fastai: tensor(3.,2)
y = x@a + torch.rand(n)
points = np.asarray(x[:, 0]), np.asarray(y)  # plt.scatter(x[:,0], y)


def mse(y_hat, y): return ((y_hat-y)**2).mean()


a = torch.tensor([-1., 1])  # fastai: tensor(-1.,1)
a = nn.Parameter(a)


def update():
    y_hat = x@a
    loss = mse(y, y_hat)
    loss.backward()
    with torch.no_grad():
        a.sub_(lr * a.grad)
        a.grad.zero_()


lr = 1e-1
for t in range(20):
    update()

points = np.asarray(x[:, 0]), np.asarray(y)  # plt.scatter(x[:,0],y)
fitted = np.asarray(x[:, 0]), np.asarray(x@a)  # expect: GG107
