# Source: https://discuss.pytorch.org/t/error-running-multiple-models-in-torch-1-7-1-but-works-in-torch-1-0/104146/8
"""The fix the answer implies: both losses were computed with the parameters in their initial
state, so both backward passes run before any parameter is updated (loss1.backward(retain_graph=
True), loss2.backward(), then opt1.step() and opt2.step()); the gradients are then those of the
state the losses were computed in."""
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
    loss2.backward()
    opt1.step()
    opt2.step()
    print(it, loss1.item(), loss2.item())
