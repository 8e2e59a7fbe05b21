# Source: https://www.codeprj.com/zh/blog/e6aa8d1.html
"""The blog post "關於pytorch下GAN loss的backward和step等注意事項" (notes on GAN losses' backward and
step): a one-pixel G and D, each a bias-free 1x1 Conv2d with SGD(lr=1.0); Y = G(X),
D_loss = D(Y.detach()) ** 2 and G_loss = D(Y) ** 2 built from one forward, D_loss backwarded with
retain_graph=True. The post's correct orders run G_loss.backward() before D_optim.step(); this
program runs the order the post warns about, D updated right after its own backward: D's conv saved
its weight for G_loss's gradient with respect to Y, the SGD step overwrites that weight in place,
and G_loss.backward() raises "one of the variables needed for gradient computation has been modified
by an inplace operation". (The stored copy of the post shows its correct orders in full; the wrong
order is theirs with the D step moved up, as the post's title describes.) Run for a few iterations
with the post's checkpoint prints."""
import torch
from torch import nn


def set_requires_grad(net: nn.Module, mode=True):
    for p in net.parameters():
        p.requires_grad_(mode)


print(f"Pytorch version: {torch.__version__} \n")

X = torch.ones(size=[1, 1, 1, 1]).requires_grad_(False)

G = nn.Conv2d(1, 1, kernel_size=1, stride=1, padding=0, bias=False)
G.weight.data.fill_(0.5)
G_optim = torch.optim.SGD(G.parameters(), lr=1.0)

D = nn.Conv2d(1, 1, kernel_size=1, stride=1, padding=0, bias=False)
D.weight.data.fill_(0.7)
D_optim = torch.optim.SGD(D.parameters(), lr=1.0)
print(f"Init grad: {G.weight.grad} {D.weight.grad}")
print(f"Init weight: {G.weight.detach()} {D.weight.detach()} \n")

for it in range(3):
    # Zero gradient of 2 layers.
    G_optim.zero_grad()
    D_optim.zero_grad()

    # Forward pass.
    Y = G(X)

    # Calculate D loss.
    D_loss = D(Y.detach()) ** 2

    # Calculate G loss.
    G_loss = D(Y) ** 2

    # Backward D loss.
    D_loss.backward(retain_graph=True)  # expect: GG203

    # Update D.
    D_optim.step()
    print(f"Checkpoint 1 grad: {G.weight.grad} {D.weight.grad}")
    print(f"Checkpoint 1 weight: {G.weight.detach()} {D.weight.detach()} \n")

    # Backward G loss.
    set_requires_grad(D, False)  # Turn off D's grad to avoid redundant gradient accumulation on D.
    G_loss.backward()  # expect: GG103
    set_requires_grad(D, True)

    # Update G.
    G_optim.step()
    print(f"Checkpoint 2 grad: {G.weight.grad} {D.weight.grad}")
    print(f"Checkpoint 2 weight: {G.weight.detach()} {D.weight.detach()} \n")
