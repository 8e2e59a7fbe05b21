"""A target network is frozen with requires_grad_(False) only after the regression targets were
already produced from it; the targets keep the graph built while it was trainable."""
import torch
import torch.nn as nn

target_net = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))
inputs = torch.randn(10, 4)
targets = target_net(inputs)
target_net.requires_grad_(False)

predictor = nn.Linear(4, 2)
opt = torch.optim.Adam(predictor.parameters(), lr=1e-2)
for step in range(3):
    loss = (predictor(inputs) - targets).pow(2).sum(1).mean()
    opt.zero_grad()
    loss.backward()  # expect: GG101
    opt.step()
