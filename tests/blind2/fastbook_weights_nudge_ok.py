# Source: https://github.com/fastai/fastbook/pull/471
"""The fastbook cell with the pull request's fix: the weight is nudged through .data
(weights[0].data *= 1.0001), which autograd does not track."""
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

weights[0].data *= 1.0001
preds = linear1(train_x)
print(((preds > 0.0).float() == train_y).float().mean().item())
