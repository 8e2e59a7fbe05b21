"""Train/val phases with torch.set_grad_enabled(phase == "train"); the smoothed regression
targets were made before the loop by a learnable smoothing layer."""
import torch
import torch.nn as nn

smoother = nn.Conv1d(1, 1, 3, padding=1)
signal = torch.randn(4, 1, 10)
targets = smoother(signal)
model = nn.Conv1d(1, 1, 5, padding=2)
opt = torch.optim.Adam([*model.parameters(), *smoother.parameters()], lr=1e-3)
for epoch in range(2):
    for phase in ("train", "val"):
        with torch.set_grad_enabled(phase == "train"):
            loss = (model(signal + 0.1 * torch.randn_like(signal)) - targets).pow(2).mean()
            if phase == "train":
                opt.zero_grad()
                loss.backward()  # expect: GG101
                opt.step()
