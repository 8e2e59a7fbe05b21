# Source: https://zenn.dev/rikuto1110/articles/in-place-error
"""Capping a leaf weight vector out of place with a mask arithmetic expression (fixed).

The Zenn article is about the in-place-operation errors PyTorch raises when a
tensor that requires grad is written through ``x.add_()``, ``x += 0.5`` or
``x[mask] = 0.5``; its example sets the entries of a leaf
``x = torch.tensor([...], requires_grad=True)`` selected by ``mask = x > 0.5``.
Here that pattern sits in a small fitting loop: a leaf vector of mixing
weights ``w`` (optimized directly with Adam) combines 8 signals, and every
step caps the weights with ``w[mask] = CAP`` before the forward pass.  The
mask assignment is an in-place write into a leaf that requires grad, so torch
raises "a leaf Variable that requires grad is being used in an in-place
operation" on the first step.

Fixed here with the article's recipe, ``元の値 + mask * (変更後 - 元の値)``:
``w_capped = w + mask * (torch.full_like(w, CAP) - w)`` is a new tensor and
the leaf ``w`` is only changed by the optimizer.
"""
import torch

torch.manual_seed(0)

N_SIGNALS, N_SAMPLES, CAP = 8, 64, 0.5

signals = torch.randn(N_SAMPLES, N_SIGNALS)
true_w = torch.tensor([0.1, 0.4, 0.5, 0.0, 0.3, 0.5, 0.2, 0.05])
target = signals @ true_w + 0.01 * torch.randn(N_SAMPLES)

w = torch.rand(N_SIGNALS, requires_grad=True)
optimizer = torch.optim.Adam([w], lr=0.05)

for step in range(20):
    optimizer.zero_grad()
    mask = w > CAP
    # 元の値 + mask * (変更後 - 元の値)
    w_capped = w + mask * (torch.full_like(w, CAP) - w)
    pred = signals @ w_capped
    loss = ((pred - target) ** 2).mean()
    loss.backward()
    optimizer.step()
    if step % 5 == 0:
        print(f"step {step}: loss {loss.item():.4f}")
