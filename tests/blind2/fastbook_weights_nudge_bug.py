# Source: https://github.com/fastai/fastbook/pull/471
"""fastbook's 04_mnist_basics notebook, "Stochastic Gradient Descent": the linear 3-vs-7 model's
parameters come from init_params(...).requires_grad_(), and the text nudges one weight to show
that accuracy barely moves, weights[0] *= 1.0001, with grad enabled: an in-place write into a view
of a leaf that requires grad. Random 28x28 "images" replace the MNIST sample."""
import torch

torch.manual_seed(42)
train_x = torch.rand(12, 28*28)
train_y = torch.tensor([1]*6 + [0]*6).unsqueeze(1)


def init_params(size, std=1.0): return (torch.randn(size)*std).requires_grad_()


weights = init_params((28*28, 1))
bias = init_params(1)


def linear1(xb): return xb@weights + bias


preds = linear1(train_x)
corrects = (preds > 0.0).float() == train_y
print(corrects.float().mean().item())

weights[0] *= 1.0001  # expect: GG108
preds = linear1(train_x)
print(((preds > 0.0).float() == train_y).float().mean().item())
