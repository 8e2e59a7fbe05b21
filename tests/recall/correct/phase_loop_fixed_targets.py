"""Train/val phases with torch.set_grad_enabled; the targets are fixed data."""
import torch
import torch.nn as nn

signal = torch.randn(4, 1, 10)
targets = torch.nn.functional.avg_pool1d(signal, 3, stride=1, padding=1)
model = nn.Conv1d(1, 1, 5, padding=2)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(2):
    for phase in ("train", "val"):
        model.train(phase == "train")
        with torch.set_grad_enabled(phase == "train"):
            loss = (model(signal + 0.1 * torch.randn_like(signal)) - targets).pow(2).mean()
            if phase == "train":
                opt.zero_grad()
                loss.backward()
                opt.step()
