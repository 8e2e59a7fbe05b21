# Source: https://discuss.pytorch.org/t/trying-to-understand-why-output-of-nn-linear-for-output-layer-isnt-retaining/40116
"""The fix for the thread "Trying to understand why output of nn.Linear (for output layer) isn't
retaining": L2_Y is the result of an operation, not a leaf, so autograd fills its .grad only when
asked to with `retain_grad()` (the method the poster meant by ".retain_graph_()"). forward() calls
`self.L2_Y.retain_grad()`, and `model.L2_Y.grad` holds dloss/dY after each backward."""
import torch
import torch.nn as nn

device = torch.device('cpu')
type = torch.float
args = {'device': device, 'dtype': type}


class SingleRNN(nn.Module):
    def __init__(self, n_inputs, n_outputsize):
        super(SingleRNN, self).__init__()

        numHU = 2
        bias = False

        self.Wxh = nn.Linear(
            in_features=n_inputs, out_features=numHU, bias=bias)

        self.Whh = nn.Linear(
            in_features=numHU + self.Wxh.out_features, out_features=numHU, bias=bias)

        self.Why = nn.Linear(
            in_features=numHU, out_features=n_outputsize, bias=bias)

    def forward(self, X0, H0):
        self.L0_X = self.Wxh(X0)
        self.L1_H = self.Whh(torch.cat((self.L0_X, H0), dim=1))
        self.L2_Y = self.Why(self.L1_H)
        self.L2_Y.retain_grad()  # keep the gradient of this non-leaf result
        return self.L2_Y, self.L1_H


n_inputs, n_outputs, batch = 3, 1, 4
model = SingleRNN(n_inputs, n_outputs)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
criterion = nn.MSELoss()

X0 = torch.randn(batch, n_inputs, **args)
H0 = torch.zeros(batch, 2, **args)
target = torch.randn(batch, n_outputs, **args)

for step in range(3):
    optimizer.zero_grad()
    Y, H1 = model(X0, H0)
    loss = criterion(Y, target)
    loss.backward()
    print(model.Why.weight.grad)
    print(model.L2_Y.grad)
    optimizer.step()
