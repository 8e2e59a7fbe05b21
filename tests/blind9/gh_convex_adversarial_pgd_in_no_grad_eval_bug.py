# Source: https://github.com/locuslab/convex_adversarial/issues/34
"""convex_adversarial's examples: evaluate_robust() turns gradients off with
torch.set_grad_enabled(False) for the whole evaluation loop; the reporter uncommented its
`_,pgd_err = _pgd(model, Variable(X), Variable(y), epsilon)` line, and _pgd's loss.backward() on
the attack input then has no graph. trainer.py and attacks.py are kept; robust_loss (the dual
network bound of the library) is a small interval-bound stand-in with the same (robust_ce,
robust_err) contract, MNIST a few random batches and the model a small MLP."""
import time

import torch
import torch.nn as nn
import torch.optim as optim
from torch.autograd import Variable


class Flatten(nn.Module):
    def forward(self, x):
        return x.view(x.size(0), -1)


def robust_loss(net, epsilon, X, y, **kwargs):
    """Interval bounds through Linear/ReLU layers: worst-case logits within an L-inf ball."""
    lo, hi = X.view(X.size(0), -1) - epsilon, X.view(X.size(0), -1) + epsilon
    for layer in net:
        if isinstance(layer, nn.Linear):
            mid, rad = (hi + lo) / 2, (hi - lo) / 2
            mid, rad = layer(mid), rad @ layer.weight.abs().t()
            lo, hi = mid - rad, mid + rad
        elif isinstance(layer, nn.ReLU):
            lo, hi = lo.clamp(min=0), hi.clamp(min=0)
    onehot = torch.zeros_like(lo).scatter_(1, y.view(-1, 1), 1.0)
    worst = hi * (1 - onehot) + lo * onehot
    ce = nn.CrossEntropyLoss()(worst, y)
    err = (worst.max(1)[1] != y).float().sum() / X.size(0)
    return ce, err


def _pgd(model, X, y, epsilon, niters=5, alpha=0.01):
    out = model(X)
    ce = nn.CrossEntropyLoss()(out, y)
    err = (out.data.max(1)[1] != y.data).float().sum() / X.size(0)

    X_pgd = Variable(X.data, requires_grad=True)
    for i in range(niters):
        opt = optim.Adam([X_pgd], lr=1e-3)
        opt.zero_grad()
        loss = nn.CrossEntropyLoss()(model(X_pgd), y)
        loss.backward()  # expect: GG104
        eta = alpha * X_pgd.grad.data.sign()
        X_pgd = Variable(X_pgd.data + eta, requires_grad=True)

        # adjust to be within [-epsilon, epsilon]
        eta = torch.clamp(X_pgd.data - X.data, -epsilon, epsilon)
        X_pgd = Variable(X.data + eta, requires_grad=True)

    err_pgd = (model(X_pgd).data.max(1)[1] != y.data).float().sum() / X.size(0)
    return err, err_pgd


def train_robust(loader, model, opt, epsilon, epoch, verbose, **kwargs):
    model.train()
    for i, (X, y) in enumerate(loader):
        y = y.long()
        robust_ce, robust_err = robust_loss(model, epsilon, Variable(X), Variable(y), **kwargs)
        out = model(Variable(X))
        ce = nn.CrossEntropyLoss()(out, Variable(y))
        err = (out.max(1)[1] != y).float().sum() / X.size(0)

        opt.zero_grad()
        robust_ce.backward()
        opt.step()

        if verbose and i % verbose == 0:
            print(epoch, i, robust_ce.item(), robust_err.item(), ce.item(), err.item())


def evaluate_robust(loader, model, epsilon, epoch, verbose, **kwargs):
    model.eval()
    end = time.time()
    torch.set_grad_enabled(False)
    all_robust_err = []
    for i, (X, y) in enumerate(loader):
        y = y.long()
        robust_ce, robust_err = robust_loss(model, epsilon, X, y, **kwargs)
        out = model(Variable(X))
        ce = nn.CrossEntropyLoss()(out, Variable(y))
        err = (out.max(1)[1] != y).float().sum() / X.size(0)

        _, pgd_err = _pgd(model, Variable(X), Variable(y), epsilon)

        if verbose and i % verbose == 0:
            print(epoch, i, robust_ce.item(), robust_err.item(), ce.item(), err.item(), pgd_err.item(),
                  time.time() - end)
        all_robust_err.append(robust_err)
    torch.set_grad_enabled(True)
    return sum(all_robust_err) / len(all_robust_err)


if __name__ == "__main__":
    torch.manual_seed(0)
    train_loader = [(torch.rand(8, 1, 4, 4), torch.randint(0, 10, (8,))) for _ in range(2)]
    test_loader = [(torch.rand(8, 1, 4, 4), torch.randint(0, 10, (8,))) for _ in range(2)]
    model = nn.Sequential(Flatten(), nn.Linear(16, 20), nn.ReLU(), nn.Linear(20, 10))
    opt = optim.Adam(model.parameters(), lr=1e-3)
    epsilon = 0.1
    for t in range(1):
        train_robust(train_loader, model, opt, epsilon, t, verbose=1)
        err = evaluate_robust(test_loader, model, epsilon, t, verbose=1)
        print('robust err', float(err))
