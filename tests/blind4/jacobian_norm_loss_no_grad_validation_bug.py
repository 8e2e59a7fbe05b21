# Source: https://github.com/pytorch/pytorch/issues/69217
"""Training with a loss that includes the norm of the network's input Jacobian, computed with
torch.autograd.grad (the reporter's setup): training works, but the validation loop is wrapped in
`with torch.no_grad():` to save time and memory, as usual. Inside it the forward builds no graph,
so the model output neither requires grad nor has a grad_fn, and the loss function's
torch.autograd.grad(...) fails ("element 0 of tensors does not require grad and does not have a
grad_fn"; the answer: when the loss needs gradients, don't validate under no_grad). A small MLP
regressor on random data with a contractive (Jacobian Frobenius norm) penalty stands in for the
reporter's model."""
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, d_in=8, d_hidden=32, d_out=4):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(d_in, d_hidden), nn.Tanh(), nn.Linear(d_hidden, d_out))

    def forward(self, x):
        return self.body(x)


def jacobian_norm(outputs, inputs):
    """Frobenius norm of d outputs / d inputs, one random projection per batch (Hutchinson)."""
    v = torch.randn_like(outputs)
    jv, = torch.autograd.grad(outputs, inputs, grad_outputs=v, create_graph=True)  # expect: GG104
    return jv.pow(2).sum() / inputs.shape[0]


def loss_fn(model, x, y, lam=0.1):
    x = x.requires_grad_(True)
    out = model(x)
    mse = nn.functional.mse_loss(out, y)
    return mse + lam * jacobian_norm(out, x)


def train_epoch(model, loader, optimizer):
    model.train()
    for x, y in loader:
        loss = loss_fn(model, x, y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def validate(model, loader):
    model.eval()
    total = 0.0
    with torch.no_grad():
        for x, y in loader:
            total += loss_fn(model, x, y).item()
    return total / len(loader)


model = Net()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
train_loader = [(torch.randn(16, 8), torch.randn(16, 4)) for _ in range(3)]
val_loader = [(torch.randn(16, 8), torch.randn(16, 4)) for _ in range(2)]
for epoch in range(2):
    train_epoch(model, train_loader, optimizer)
    print(epoch, validate(model, val_loader))
