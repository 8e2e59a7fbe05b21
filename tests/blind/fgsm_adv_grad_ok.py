# Source: https://github.com/BorealisAI/advertorch/issues/49
"""advertorch-style FGSM whose perturb() returns xadv.detach(), the change the reporter proposed:
the adversarial batch is a fresh leaf, made to require grad before the loss on it is backwarded,
so fgsm_tensor.grad holds the input gradient."""
import torch
import torch.nn as nn


class GradientSignAttack:
    def __init__(self, predict, loss_fn, eps=0.3, clip_min=0.0, clip_max=1.0):
        self.predict, self.loss_fn = predict, loss_fn
        self.eps, self.clip_min, self.clip_max = eps, clip_min, clip_max

    def perturb(self, x, y):
        xadv = x.clone().requires_grad_()
        outputs = self.predict(xadv)
        loss = self.loss_fn(outputs, y)
        loss.backward()
        grad_sign = xadv.grad.detach().sign()
        xadv = xadv + self.eps * grad_sign
        xadv = torch.clamp(xadv, self.clip_min, self.clip_max)
        return xadv.detach()


model = nn.Sequential(nn.Flatten(), nn.Linear(16, 8), nn.ReLU(), nn.Linear(8, 3))
loss_fn = nn.CrossEntropyLoss()
adversary = GradientSignAttack(model, loss_fn, eps=0.1)

cln_data, true_label = torch.rand(4, 1, 4, 4), torch.tensor([0, 1, 2, 0])
fgsm_tensor = adversary.perturb(cln_data, true_label).requires_grad_()
model.zero_grad()
loss_fn(model(fgsm_tensor), true_label).backward()
input_grad = fgsm_tensor.grad.clone()
print(input_grad.abs().mean())
