# Source: https://github.com/norse/norse/issues/130
"""Norse's "Reused state crashes subsequent backward passes": the LIF state returned by LIFCell
(its voltage initialised to require grad) is handed to the next call after a backward, so the
next loss walks back into the previous graph. The report's two calls are kept in a small
spike-count regression loop over batches of ten time steps that carries `s` from batch to batch,
with an Adam step after each backward. Torch 2.13 then stops on the first node it meets in the
previous batch's graph that the first backward never ran: the last step's current update, whose
F.linear saved the input weights the step has since changed in place, so it raises the in-place
error rather than the report's "backward a second time". LIFCell, LIFParameters, lif_step and
SuperSpike follow norse 0.0.x; the spike trains are random."""
from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import nn


class LIFParameters(NamedTuple):
    tau_syn_inv: torch.Tensor = torch.as_tensor(1.0 / 5e-3)
    tau_mem_inv: torch.Tensor = torch.as_tensor(1.0 / 1e-2)
    v_leak: torch.Tensor = torch.as_tensor(0.0)
    v_th: torch.Tensor = torch.as_tensor(1.0)
    v_reset: torch.Tensor = torch.as_tensor(0.0)
    alpha: float = 100.0


class LIFState(NamedTuple):
    z: torch.Tensor
    v: torch.Tensor
    i: torch.Tensor


class SuperSpike(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input_tensor, alpha):
        ctx.save_for_backward(input_tensor)
        ctx.alpha = alpha
        return torch.gt(input_tensor, torch.as_tensor(0.0)).to(input_tensor.dtype)

    @staticmethod
    def backward(ctx, grad_output):
        (inp,) = ctx.saved_tensors
        grad = grad_output / (ctx.alpha * torch.abs(inp) + 1.0).pow(2)
        return grad, None


def lif_step(input_tensor, state, input_weights, recurrent_weights, p: LIFParameters, dt=0.001):
    # compute voltage updates
    dv = dt * p.tau_mem_inv * ((p.v_leak - state.v) + state.i)
    v_decayed = state.v + dv
    # compute current updates
    di = -dt * p.tau_syn_inv * state.i
    i_decayed = state.i + di
    # compute new spikes
    z_new = SuperSpike.apply(v_decayed - p.v_th, p.alpha)
    # compute reset
    v_new = (1 - z_new) * v_decayed + z_new * p.v_reset
    # compute current jumps
    i_new = i_decayed + F.linear(input_tensor, input_weights) + F.linear(state.z, recurrent_weights)
    return z_new, LIFState(z_new, v_new, i_new)


class LIFCell(nn.Module):
    def __init__(self, input_size, hidden_size, p: LIFParameters = LIFParameters(), dt: float = 0.001):
        super(LIFCell, self).__init__()
        self.input_weights = nn.Parameter(torch.randn(hidden_size, input_size) * (2 / hidden_size) ** 0.5)
        self.recurrent_weights = nn.Parameter(torch.randn(hidden_size, hidden_size) * (2 / hidden_size) ** 0.5)
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.p = p
        self.dt = dt

    def forward(self, input_tensor, state=None):
        if state is None:
            state = LIFState(
                z=torch.zeros(input_tensor.shape[0], self.hidden_size),
                v=torch.zeros(input_tensor.shape[0], self.hidden_size, requires_grad=True),
                i=torch.zeros(input_tensor.shape[0], self.hidden_size),
            )
        return lif_step(input_tensor, state, self.input_weights, self.recurrent_weights, self.p, self.dt)


model = LIFCell(12, 4)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
s = None
for batch in range(3):
    data = (torch.rand(10, 8, 12) < 0.3).float() * 20  # ten time steps of input spikes
    target = torch.full((8, 4), 2.0)
    counts = 0
    for ts in range(data.shape[0]):
        out, s = model(data[ts], s)
        counts = counts + out
    loss = F.mse_loss(counts, target)
    optimizer.zero_grad()
    loss.backward()  # expect: GG103
    optimizer.step()
    print(batch, loss.item())
