# Source: https://discuss.pytorch.org/t/error-running-multiple-models-in-torch-1-7-1-but-works-in-torch-1-0/104146/8
"""The forum thread "Error running multiple models in torch 1.7.1 but works in torch 1.0": two
models trained with two optimizers; loss1 and loss2 are both computed from the models in their
initial state, then loss1.backward(), opt1.step(), loss2.backward(). The answer explains the new
error: since 1.5 the optimizers' in-place parameter updates are checked, and loss2's backward
needs the parameters opt1 has already changed ("one of the variables needed for gradient
computation has been modified by an inplace operation"). Reconstructed from the answer's
description: model1 produces features that loss1 supervises and model2 classifies for loss2."""
import torch
import torch.nn as nn

model1 = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Linear(32, 16))
model2 = nn.Sequential(nn.ReLU(), nn.Linear(16, 4))
opt1 = torch.optim.SGD(model1.parameters(), lr=0.1)
opt2 = torch.optim.SGD(model2.parameters(), lr=0.1)
criterion1 = nn.MSELoss()
criterion2 = nn.CrossEntropyLoss()

for it in range(3):
    x = torch.randn(8, 10)
    feat_target = torch.randn(8, 16)
    labels = torch.randint(0, 4, (8,))

    feat = model1(x)
    loss1 = criterion1(feat, feat_target)
    loss2 = criterion2(model2(feat), labels)

    opt1.zero_grad()
    opt2.zero_grad()
    loss1.backward(retain_graph=True)
    opt1.step()
    loss2.backward()  # expect: GG103
    opt2.step()
    print(it, loss1.item(), loss2.item())
