"""Training with validation: predictions are collected detached into lists and concatenated for
metrics; the best weights are kept as a deepcopy of the state dict."""
import copy

import torch
import torch.nn as nn

model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.9)
train = [(torch.randn(5, 4), torch.randn(5, 1)) for _ in range(2)]
val = [(torch.randn(5, 4), torch.randn(5, 1)) for _ in range(2)]
best_loss, best_state, history = float("inf"), None, []
for epoch in range(3):
    model.train()
    running_loss = 0.0
    for x, y in train:
        loss = nn.functional.mse_loss(model(x), y)
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        running_loss += loss.item()
    sched.step()
    model.eval()
    preds, targets = [], []
    with torch.no_grad():
        for x, y in val:
            preds.append(model(x).detach().cpu())
            targets.append(y)
    val_loss = nn.functional.mse_loss(torch.cat(preds), torch.cat(targets)).item()
    history.append((running_loss, val_loss))
    if val_loss < best_loss:
        best_loss, best_state = val_loss, copy.deepcopy(model.state_dict())
model.load_state_dict(best_state)
