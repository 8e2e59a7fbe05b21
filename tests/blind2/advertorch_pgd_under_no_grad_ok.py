# Source: https://github.com/BorealisAI/advertorch/issues/79
"""The adversarial evaluation with the maintainer's answer ("You'll need to use autograd to get
gradient based attack working. So removing `with torch.no_grad()` would probably make it work"):
the attack runs with grad enabled, and only the evaluation forward on the adversarial batch stays
under no_grad."""
import numpy as np
import torch
import torch.nn as nn


def clamp(input, min=None, max=None):
    return torch.clamp(input, min=min, max=max)


def batch_clamp(float_or_vector, tensor):
    return torch.max(torch.min(tensor, torch.tensor(float_or_vector)), torch.tensor(-float_or_vector))


def perturb_iterative(xvar, yvar, predict, nb_iter, eps, eps_iter, loss_fn,
                      delta_init=None, minimize=False, ord=np.inf,
                      clip_min=0.0, clip_max=1.0):
    if delta_init is not None:
        delta = delta_init
    else:
        delta = torch.zeros_like(xvar)

    delta.requires_grad_()
    for ii in range(nb_iter):
        outputs = predict(xvar + delta)
        loss = loss_fn(outputs, yvar)
        if minimize:
            loss = -loss

        loss.backward()
        if ord == np.inf:
            grad_sign = delta.grad.data.sign()
            delta.data = delta.data + eps_iter * grad_sign
            delta.data = batch_clamp(eps, delta.data)
            delta.data = clamp(xvar.data + delta.data, clip_min, clip_max) - xvar.data
        delta.grad.data.zero_()

    x_adv = clamp(xvar + delta, clip_min, clip_max)
    return x_adv


class LinfPGDAttack:
    def __init__(self, predict, loss_fn=None, eps=0.3, nb_iter=40, eps_iter=0.01,
                 rand_init=True, clip_min=0., clip_max=1., targeted=False):
        self.predict = predict
        self.loss_fn = loss_fn if loss_fn is not None else nn.CrossEntropyLoss(reduction="sum")
        self.eps, self.nb_iter, self.eps_iter = eps, nb_iter, eps_iter
        self.rand_init, self.targeted = rand_init, targeted
        self.clip_min, self.clip_max = clip_min, clip_max

    def perturb(self, x, y=None):
        delta = torch.zeros_like(x)
        if self.rand_init:
            delta.uniform_(-self.eps, self.eps)
            delta.data = clamp(x + delta.data, min=self.clip_min, max=self.clip_max) - x
        return perturb_iterative(x, y, self.predict, nb_iter=self.nb_iter, eps=self.eps,
                                 eps_iter=self.eps_iter, loss_fn=self.loss_fn,
                                 minimize=self.targeted, delta_init=delta,
                                 clip_min=self.clip_min, clip_max=self.clip_max)


net = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                    nn.Linear(8, 10))
adversary = LinfPGDAttack(net, loss_fn=nn.CrossEntropyLoss(reduction="sum"), eps=0.03,
                          nb_iter=3, eps_iter=0.01, rand_init=True, clip_min=0.0, clip_max=1.0,
                          targeted=False)
testloader = [(torch.rand(4, 3, 8, 8), torch.randint(0, 10, (4,))) for _ in range(2)]


def test():
    net.eval()
    correct = 0
    total = 0
    for batch_idx, (inputs, targets) in enumerate(testloader):
        adv_untargeted = adversary.perturb(inputs, targets)
        inputs = adv_untargeted

        with torch.no_grad():
            outputs = net(inputs)
            _, predicted = outputs.max(1)
            total += targets.size(0)
            correct += predicted.eq(targets).sum().item()
    print('adversarial accuracy', correct / total)


test()
