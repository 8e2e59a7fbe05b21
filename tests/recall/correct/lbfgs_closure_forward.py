"""Curve fitting with L-BFGS; the closure runs the prediction and the loss each time it is called."""
import torch

t = torch.linspace(0, 2, 20)
y = 1.5 * torch.exp(-0.7 * t)
params = torch.tensor([1.0, -1.0], requires_grad=True)
optimizer = torch.optim.LBFGS([params], lr=0.5, max_iter=5)


def closure():
    optimizer.zero_grad()
    loss = ((params[0] * torch.exp(params[1] * t) - y) ** 2).mean()
    loss.backward()
    return loss


optimizer.step(closure)
