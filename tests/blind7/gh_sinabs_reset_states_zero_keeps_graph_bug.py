# Source: https://github.com/synsense/sinabs/issues/5
"""sinabs (synsense, layers/stateful_layer.py): StatefulLayer.reset_states() zeroes each state
buffer in place (`buffer.zero_()`). The membrane potential left by the previous batch still
carries that batch's graph, and an in-place zero_() keeps it in the graph, so the next batch's
potential is computed from a tensor whose history the previous loss.backward() freed: the second
backward fails ("Trying to backward through the graph a second time"). The issue's fix detaches
each buffer after zeroing it. StatefulLayer.reset_states is the library's; a small
integrate-and-fire layer with a surrogate spike gradient, a conv SNN over time steps, and random
event frames with class targets stand in for the rest."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class StatefulLayer(nn.Module):
    def __init__(self, state_names):
        super().__init__()
        for name in state_names:
            self.register_buffer(name, torch.zeros(0))

    def is_state_initialised(self):
        return all(buffer.numel() > 0 for buffer in self.buffers())

    def init_state_with_shape(self, shape):
        for name, buffer in self.named_buffers():
            self.register_buffer(name, torch.zeros(shape))

    def reset_states(self, randomize=False):
        """Reset the state/buffers in a layer."""
        if self.is_state_initialised():
            for buffer in self.buffers():
                if randomize:
                    torch.nn.init.uniform_(buffer)
                else:
                    buffer.zero_()


class IAF(StatefulLayer):
    """Integrate-and-fire over the time dimension (input: batch, time, ...)."""
    def __init__(self, spike_threshold=1.0):
        super().__init__(state_names=["v_mem"])
        self.spike_threshold = spike_threshold

    def forward(self, input_data):
        if not self.is_state_initialised():
            self.init_state_with_shape((input_data.shape[0], *input_data.shape[2:]))
        spikes = []
        for step in range(input_data.shape[1]):
            self.v_mem = self.v_mem + input_data[:, step]
            soft = torch.sigmoid(4. * (self.v_mem - self.spike_threshold))
            spike = soft + ((self.v_mem >= self.spike_threshold).float() - soft).detach()
            self.v_mem = self.v_mem - spike * self.spike_threshold  # membrane subtract
            spikes.append(spike)
        return torch.stack(spikes, dim=1)


class SNN(nn.Module):
    def __init__(self, channels=4, classes=3):
        super().__init__()
        self.conv = nn.Conv2d(2, channels, 3, padding=1)
        self.spk1 = IAF()
        self.fc = nn.Linear(channels * 8 * 8, classes)
        self.spk2 = IAF()

    def forward(self, x):  # x: batch, time, 2, 8, 8
        b, t = x.shape[:2]
        h = self.conv(x.flatten(0, 1)).view(b, t, -1, 8, 8)
        h = self.spk1(h).flatten(2)
        return self.spk2(self.fc(h))

    def reset_states(self):
        for layer in self.modules():
            if isinstance(layer, StatefulLayer):
                layer.reset_states()


model = SNN()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
batches = [(torch.rand(4, 5, 2, 8, 8), torch.randint(0, 3, (4,))) for _ in range(3)]
for epoch in range(2):
    for events, target in batches:
        model.reset_states()
        optimizer.zero_grad()
        out = model(events)
        loss = F.cross_entropy(out.sum(dim=1), target)
        loss.backward()  # expect: GG101
        optimizer.step()
        print(epoch, loss.item())
