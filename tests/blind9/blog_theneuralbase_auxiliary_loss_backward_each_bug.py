# Source: https://theneuralbase.com/pytorch/learn/beginner/loss-backward-computing-gradients/
"""The post "loss.backward() - computing gradients" and its team note: "calling backward() on
tensors that flow into multiple loss calculations (multitask learning, auxiliary losses)
requires retain_graph=True on all but the final backward() call, otherwise the computation
graph is freed after the first call and subsequent backward() calls fail". A multitask
regressor (shared trunk, main and auxiliary heads) trained with the post's Adam/MSELoss pattern,
each loss backwarded on its own. The note names the error "leaf variable has been modified";
torch 2.13 raises "Trying to backward through the graph a second time" at the second backward."""
import torch
import torch.nn as nn
from torch.optim import Adam


class MultiTaskNet(nn.Module):
    def __init__(self, n_in=3, n_hidden=16):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(n_in, n_hidden), nn.Tanh())
        self.main_head = nn.Linear(n_hidden, 1)
        self.aux_head = nn.Linear(n_hidden, 2)

    def forward(self, x):
        h = self.trunk(x)
        return self.main_head(h), self.aux_head(h)


torch.manual_seed(42)
model = MultiTaskNet()
loss_fn = nn.MSELoss()
optimizer = Adam(model.parameters(), lr=0.01)

for epoch in range(3):
    X = torch.randn(8, 3)
    y, y_aux = torch.randn(8, 1), torch.randn(8, 2)
    output, aux_output = model(X)
    loss = loss_fn(output, y)
    auxiliary_loss = 0.3 * loss_fn(aux_output, y_aux)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    auxiliary_loss.backward()  # expect: GG101
    optimizer.step()
    print(epoch, loss.item(), auxiliary_loss.item())
