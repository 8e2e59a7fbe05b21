# Source: https://openillumi.com/pytorch-backward-retain-graph-explained
"""Multi-task model with a shared encoder trained on the summed task losses (fixed).

The article explains that PyTorch frees the computation graph after one
``.backward()`` and that multi-task learning, when each task's loss is
backpropagated separately through the same shared graph, runs into
"Trying to backward through the graph a second time".  Here a shared MLP
encoder feeds a classification head and a regression head; the training step
calls ``loss_cls.backward()`` and then ``loss_reg.backward()``.  The first
call frees the encoder's part of the graph (its saved activations), so the
second call raises.

Fixed here with the article's best practice: the task losses are summed and
``total_loss.backward()`` is called once per step.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class MultiTaskNet(nn.Module):
    def __init__(self, in_dim=16, hidden=32, n_classes=4):
        super().__init__()
        self.encoder = nn.Sequential(
            nn.Linear(in_dim, hidden), nn.ReLU(),
            nn.Linear(hidden, hidden), nn.ReLU(),
        )
        self.cls_head = nn.Linear(hidden, n_classes)
        self.reg_head = nn.Linear(hidden, 1)

    def forward(self, x):
        z = self.encoder(x)
        return self.cls_head(z), self.reg_head(z)


model = MultiTaskNet()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

x = torch.randn(128, 16)
y_cls = torch.randint(0, 4, (128,))
y_reg = torch.randn(128, 1)

for epoch in range(2):
    for i in range(0, 128, 32):
        xb, yc, yr = x[i:i + 32], y_cls[i:i + 32], y_reg[i:i + 32]
        optimizer.zero_grad()
        logits, pred = model(xb)
        loss_cls = F.cross_entropy(logits, yc)
        loss_reg = F.mse_loss(pred, yr)
        # ベストプラクティス: 損失を合計して一度だけbackward
        total_loss = loss_cls + loss_reg
        total_loss.backward()
        optimizer.step()
    print(f"epoch {epoch}: cls {loss_cls.item():.4f} reg {loss_reg.item():.4f}")
