# Source: https://github.com/jeshraghian/snntorch/issues/250
"""Spiking CNN in the style of snntorch's tutorials: leaky integrate-and-fire neurons built with
init_hidden=True keep their membrane potential on the module, and the forward pass runs num_steps
time steps. forward() resets the membranes first (the maintainers' fix: utils.reset(net) inside
forward), so each batch starts from a fresh state."""
import torch
import torch.nn as nn


class Leaky(nn.Module):
    """LIF neuron with its state kept on the module (snntorch.Leaky(init_hidden=True))."""

    def __init__(self, beta, threshold=1.0, output=False):
        super().__init__()
        self.beta, self.threshold, self.output = beta, threshold, output
        self.mem = None

    def reset_mem(self):
        self.mem = None

    def forward(self, x):
        if self.mem is None:
            self.mem = torch.zeros_like(x)
        self.mem = self.beta * self.mem + x
        spk = torch.sigmoid(5 * (self.mem - self.threshold))  # surrogate spike
        self.mem = self.mem - spk * self.threshold
        return (spk, self.mem) if self.output else spk


def reset(net):
    for m in net.modules():
        if isinstance(m, Leaky):
            m.reset_mem()


net = nn.Sequential(nn.Conv2d(1, 4, 3), nn.MaxPool2d(2), Leaky(beta=0.9),
                    nn.Flatten(), nn.Linear(4 * 3 * 3, 3), Leaky(beta=0.9, output=True))


class SCNN(nn.Module):
    def __init__(self, net, num_steps=4):
        super().__init__()
        self.net, self.num_steps = net, num_steps

    def forward(self, x):
        spk_rec, mem_rec = [], []
        reset(self.net)  # resets hidden states for all LIF neurons in net
        for step in range(self.num_steps):
            spk_out, mem_out = self.net(x)
            spk_rec.append(spk_out)
            mem_rec.append(mem_out)
        return torch.stack(spk_rec), torch.stack(mem_rec)


model = SCNN(net)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
loss_fn = nn.CrossEntropyLoss()

for batch in range(2):
    data, targets = torch.randn(2, 1, 8, 8), torch.tensor([0, 2])
    spk_rec, mem_rec = model(data)
    loss_val = sum(loss_fn(mem_rec[step], targets) for step in range(model.num_steps))
    optimizer.zero_grad()
    loss_val.backward()
    optimizer.step()
