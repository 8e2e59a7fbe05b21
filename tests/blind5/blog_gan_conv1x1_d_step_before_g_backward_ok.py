# Source: https://www.codeprj.com/zh/blog/e6aa8d1.html
"""The blog post's first correct way: G_loss is backwarded (with D's parameters frozen) and G
stepped before D_optim.step(), so the D weight G_loss's graph saved is still the one it saw. The
post passes retain_graph=True to D_loss.backward(); D_loss's graph (through Y.detach()) is never
walked again, so this twin drops it to carry no mark. Run for a few iterations with the post's
checkpoint prints."""
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
    D_loss.backward()
    print(f"Checkpoint 1 grad: {G.weight.grad} {D.weight.grad}")
    print(f"Checkpoint 1 weight: {G.weight.detach()} {D.weight.detach()} \n")

    # Backward G loss.
    set_requires_grad(D, False)  # Turn off D's grad to avoid redundant gradient accumulation on D.
    G_loss.backward()
    set_requires_grad(D, True)

    # Update G.
    G_optim.step()
    print(f"Checkpoint 2 grad: {G.weight.grad} {D.weight.grad}")
    print(f"Checkpoint 2 weight: {G.weight.detach()} {D.weight.detach()} \n")

    # Update D.
    D_optim.step()
