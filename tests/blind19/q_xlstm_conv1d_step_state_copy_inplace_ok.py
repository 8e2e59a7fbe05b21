# Source: https://github.com/NX-AI/xlstm/pull/81
"""Fixed twin (the PR's fix). xlstm's `conv1d_step` (xlstm/components/conv.py), used by CausalConv1d.step() when an xLSTM block
is run one token at a time, updates the convolution state in place:
`conv_state.copy_(torch.roll(conv_state, -1, 1))` and `conv_state[:, -1:, :] = x`, then computes
`y = torch.sum(conv_state * conv1d_weight, dim=1, keepdim=True)`. The product saves conv_state for
the weight's gradient; the next step's copy_ / slice assignment overwrite that same tensor, so a
training loop that backpropagates through several step() calls fails in loss.backward() with "one
of the variables needed for gradient computation has been modified by an inplace operation". The
PR's fix: build the new state out of place (roll / concatenate instead of copy_ and slice
assignment). The surrounding block is a small stand-in for the mLSTM layer (up-projection, causal
conv step, SiLU, down-projection), trained on random sequences token by token.
"""
from dataclasses import dataclass, field
from typing import Optional

import torch
from torch import nn

torch.manual_seed(0)


@dataclass
class CausalConv1dConfig:
    feature_dim: int = None
    kernel_size: int = 4
    causal_conv_bias: bool = True
    channel_mixing: bool = False
    conv1d_kwargs: dict = field(default_factory=dict)


def conv1d_step(x, conv_state, conv1d_weight, conv1d_bias=None):
    assert x.shape[0] == conv_state.shape[0]
    assert x.shape[2] == conv_state.shape[2]
    assert x.shape[1] == 1
    # fix (the PR's): a new state tensor each step instead of overwriting the saved one
    conv_state = torch.cat([conv_state[:, 1:, :], x], dim=1)
    y = torch.sum(conv_state * conv1d_weight, dim=1, keepdim=True)
    if conv1d_bias is not None:
        y += conv1d_bias
    return y, conv_state


class CausalConv1d(nn.Module):
    config_class = CausalConv1dConfig

    def __init__(self, config: CausalConv1dConfig):
        super().__init__()
        self.config = config
        self.groups = self.config.feature_dim
        if self.config.channel_mixing:
            self.groups = 1
        self.pad = self.config.kernel_size - 1
        self.conv = nn.Conv1d(
            in_channels=self.config.feature_dim,
            out_channels=self.config.feature_dim,
            kernel_size=self.config.kernel_size,
            padding=self.pad,
            groups=self.groups,
            bias=self.config.causal_conv_bias,
            **self.config.conv1d_kwargs,
        )

    def step(self, x, conv_state=None):
        if self.config.kernel_size == 0:
            return x, conv_state
        B, S, D = x.shape
        if conv_state is None:
            conv_state = (
                torch.zeros(size=(B, self.config.kernel_size, D),
                            device=self.conv.weight.device, dtype=self.conv.weight.dtype),
            )
        y, conv_state = conv1d_step(
            x,
            conv_state[0],
            self.conv.weight[:, 0, :].transpose(0, 1),
            conv1d_bias=self.conv.bias if self.config.causal_conv_bias else None,
        )
        return y, (conv_state,)


class MLSTMLayerStandIn(nn.Module):
    """Up-projection -> causal conv (step mode) -> SiLU -> down-projection, as in the mLSTM layer."""
    def __init__(self, embedding_dim=8, proj_factor=2, conv1d_kernel_size=4):
        super().__init__()
        inner = embedding_dim * proj_factor
        self.proj_up = nn.Linear(embedding_dim, inner)
        self.conv1d = CausalConv1d(CausalConv1dConfig(feature_dim=inner, kernel_size=conv1d_kernel_size))
        self.conv_act_fn = nn.SiLU()
        self.proj_down = nn.Linear(inner, embedding_dim)

    def step(self, x, conv_state: Optional[tuple] = None):
        x_inner = self.proj_up(x)
        x_conv, conv_state = self.conv1d.step(x_inner, conv_state=conv_state)
        x_conv_act = self.conv_act_fn(x_conv)
        return self.proj_down(x_conv_act), conv_state


def train(model, optimizer, n_epochs=2, seq_len=5, batch=3, dim=8):
    for epoch in range(n_epochs):
        seq = torch.randn(batch, seq_len, dim)
        target = torch.randn(batch, seq_len, dim)
        conv_state = None
        outputs = []
        for t in range(seq_len):
            y, conv_state = model.step(seq[:, t:t + 1, :], conv_state=conv_state)
            outputs.append(y)
        out = torch.cat(outputs, dim=1)
        loss = nn.functional.mse_loss(out, target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print('epoch', epoch, 'loss', loss.item())


model = MLSTMLayerStandIn()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
train(model, optimizer)
