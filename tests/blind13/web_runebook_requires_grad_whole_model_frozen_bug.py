# Source: https://runebook.dev/en/docs/pytorch/generated/torch.nn.module/torch.nn.Module.requires_grad_
"""The guide's "common mistake" with `Module.requires_grad_()`: meaning to freeze only the
pretrained backbone, the user calls `model.requires_grad_(False)` on the whole model, head
included. Here a small backbone + classification head (a stand-in for the guide's resnet18 with a
new fc, no download) is frozen that way in `prepare_for_finetune`; no parameter requires grad, so
the loss has no grad_fn and `loss.backward()` raises "element 0 of tensors does not require grad".
Fix from the guide: freeze only the backbone's parameters.
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
    model.requires_grad_(False)
    return model


model = prepare_for_finetune(Classifier(12, 16, 4))
opt = torch.optim.SGD(model.fc.parameters(), lr=0.1)
criterion = nn.CrossEntropyLoss()
x = torch.randn(20, 12)
y = torch.randint(0, 4, (20,))
for epoch in range(3):
    opt.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()  # expect: GG104
    opt.step()
    print(epoch, loss.item())
