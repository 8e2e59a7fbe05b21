# Source: https://github.com/openai/DALL-E/pull/15
"""DALL-E's dall_e/utils.py Conv2d with the PR's fix: the weight is created without
requires_grad, filled with normal_ (an in-place op on a plain tensor), and requires_grad is set
after the initialisation (here by nn.Parameter(w, requires_grad=...)), so the parameter stays a
trainable leaf."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Conv2d(nn.Module):
    def __init__(self, n_in, n_out, kw, use_float16=False, device=torch.device("cpu"), requires_grad=False):
        super().__init__()
        self.n_in = n_in
        self.n_out = n_out
        self.kw = kw
        self.use_float16 = use_float16
        self.device = device
        self.requires_grad = requires_grad
        self.__attrs_post_init__()

    def __attrs_post_init__(self):
        size = (self.n_out, self.n_in, self.kw, self.kw)
        w = torch.empty(size=size, dtype=torch.float32, device=self.device)
        w.normal_(std=1 / math.sqrt(self.n_in * self.kw ** 2))

        b = torch.zeros((self.n_out,), dtype=torch.float32, device=self.device)
        self.w = nn.Parameter(w, requires_grad=self.requires_grad)
        self.b = nn.Parameter(b, requires_grad=self.requires_grad)

    def forward(self, x):
        if self.use_float16 and 'cuda' in self.w.device.type:
            if x.dtype != torch.float16:
                x = x.half()
            w, b = self.w.half(), self.b.half()
        else:
            if x.dtype != torch.float32:
                x = x.float()
            w, b = self.w, self.b
        return F.conv2d(x, w, b, padding=(self.kw - 1) // 2)


class EncoderBlock(nn.Module):
    def __init__(self, n_in, n_out, n_layers, device=None, requires_grad=False):
        super().__init__()
        n_hid = n_out // 4
        self.post_gain = 1 / (n_layers ** 2)
        make_conv = lambda n_i, n_o, kw: Conv2d(n_i, n_o, kw, device=device, requires_grad=requires_grad)
        self.id_path = make_conv(n_in, n_out, 1) if n_in != n_out else nn.Identity()
        self.res_path = nn.Sequential(
            nn.ReLU(), make_conv(n_in, n_hid, 3),
            nn.ReLU(), make_conv(n_hid, n_out, 1),
        )

    def forward(self, x):
        return self.id_path(x) + self.post_gain * self.res_path(x)


if __name__ == "__main__":
    device = torch.device("cpu")
    block = EncoderBlock(3, 8, n_layers=2, device=device, requires_grad=True)
    opt = torch.optim.Adam(block.parameters(), lr=1e-3)
    x = torch.randn(2, 3, 8, 8)
    for step in range(2):
        loss = block(x).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
