# Source: https://runebook.dev/en/docs/pytorch/generated/torch.nn.module/torch.nn.Module.requires_grad_
"""The guide's backbone + new head fine-tuning with its fix: `prepare_for_finetune` freezes only
the backbone (`model.backbone.requires_grad_(False)`), so the head's parameters still require grad
and the loss has a graph to backward through.
"""
import torch
import torch.nn as nn


class Classifier(nn.Module):
    def __init__(self, n_in, n_feat, n_cls):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(n_in, n_feat), nn.ReLU(), nn.Linear(n_feat, n_feat), nn.ReLU())
        self.fc = nn.Linear(n_feat, n_cls)

    def forward(self, x):
        return self.fc(self.backbone(x))


def prepare_for_finetune(model):
    model.backbone.requires_grad_(False)
    return model


model = prepare_for_finetune(Classifier(12, 16, 4))
opt = torch.optim.SGD(model.fc.parameters(), lr=0.1)
criterion = nn.CrossEntropyLoss()
x = torch.randn(20, 12)
y = torch.randint(0, 4, (20,))
for epoch in range(3):
    opt.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    opt.step()
    print(epoch, loss.item())
