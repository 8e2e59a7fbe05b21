"""Curve fitting with L-BFGS: the model's prediction is computed before the closure, and the
closure only builds the loss from it; L-BFGS calls the closure more than once per step."""
import torch

t = torch.linspace(0, 2, 20)
y = 1.5 * torch.exp(-0.7 * t)
params = torch.tensor([1.0, -1.0], requires_grad=True)
optimizer = torch.optim.LBFGS([params], lr=0.5, max_iter=5)

pred = params[0] * torch.exp(params[1] * t)


def closure():
    optimizer.zero_grad()
    loss = ((pred - y) ** 2).mean()
    loss.backward()  # expect: GG101
    return loss


optimizer.step(closure)
