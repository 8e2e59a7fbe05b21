# Source: https://github.com/thuml/Anomaly-Transformer/issues/1
"""Anomaly Transformer's Solver with the fix the issue reports working (and the repository's
current solver.py): the optimizer step between the two backwards of the minimax strategy is
removed, so loss1 and loss2 are both backwarded through the forward they were computed from and
one step applies their summed gradients. Same small AnomalyTransformer and random windows."""
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def my_kl_loss(p, q):
    res = p * (torch.log(p + 0.0001) - torch.log(q + 0.0001))
    return torch.mean(torch.sum(res, dim=-1), dim=1)


class AnomalyAttention(nn.Module):
    def __init__(self, win_size, d_model, n_heads):
        super().__init__()
        self.n_heads = n_heads
        self.query_projection = nn.Linear(d_model, d_model)
        self.key_projection = nn.Linear(d_model, d_model)
        self.value_projection = nn.Linear(d_model, d_model)
        self.sigma_projection = nn.Linear(d_model, n_heads)
        self.out_projection = nn.Linear(d_model, d_model)
        idx = torch.arange(win_size, dtype=torch.float32)
        self.register_buffer("distances", (idx[:, None] - idx[None, :]).abs())

    def forward(self, x):
        B, L, _ = x.shape
        H = self.n_heads
        queries = self.query_projection(x).view(B, L, H, -1)
        keys = self.key_projection(x).view(B, L, H, -1)
        values = self.value_projection(x).view(B, L, H, -1)
        scale = 1. / math.sqrt(queries.shape[-1])
        scores = torch.einsum("blhe,bshe->bhls", queries, keys)
        series = torch.softmax(scale * scores, dim=-1)
        sigma = self.sigma_projection(x).transpose(1, 2)  # B H L
        sigma = torch.sigmoid(sigma * 5) + 1e-5
        sigma = torch.pow(3, sigma) - 1
        sigma = sigma.unsqueeze(-1).repeat(1, 1, 1, L)
        prior = 1.0 / (math.sqrt(2 * math.pi) * sigma) * torch.exp(-self.distances ** 2 / 2 / (sigma ** 2))
        out = torch.einsum("bhls,bshd->blhd", series, values).reshape(B, L, -1)
        return self.out_projection(out), series, prior


class EncoderLayer(nn.Module):
    def __init__(self, attention, d_model, d_ff):
        super().__init__()
        self.attention = attention
        self.conv1 = nn.Conv1d(d_model, d_ff, kernel_size=1)
        self.conv2 = nn.Conv1d(d_ff, d_model, kernel_size=1)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)

    def forward(self, x):
        new_x, attn, prior = self.attention(x)
        x = x + new_x
        y = x = self.norm1(x)
        y = F.gelu(self.conv1(y.transpose(-1, 1)))
        y = self.conv2(y).transpose(-1, 1)
        return self.norm2(x + y), attn, prior


class AnomalyTransformer(nn.Module):
    def __init__(self, win_size, enc_in, c_out, d_model=16, n_heads=2, e_layers=3, d_ff=16):
        super().__init__()
        self.embedding = nn.Linear(enc_in, d_model)
        self.layers = nn.ModuleList(
            [EncoderLayer(AnomalyAttention(win_size, d_model, n_heads), d_model, d_ff) for _ in range(e_layers)])
        self.projection = nn.Linear(d_model, c_out)

    def forward(self, x):
        enc_out = self.embedding(x)
        series_list, prior_list = [], []
        for layer in self.layers:
            enc_out, series, prior = layer(enc_out)
            series_list.append(series)
            prior_list.append(prior)
        return self.projection(enc_out), series_list, prior_list, None


class Solver(object):
    def __init__(self, config):
        self.__dict__.update(**config)
        self.train_loader = [(torch.randn(self.batch_size, self.win_size, self.input_c), None) for _ in range(3)]
        self.model = AnomalyTransformer(win_size=self.win_size, enc_in=self.input_c, c_out=self.output_c, e_layers=3)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=self.lr)
        self.criterion = nn.MSELoss()

    def train(self):
        for epoch in range(self.num_epochs):
            loss1_list = []
            self.model.train()
            for i, (input_data, labels) in enumerate(self.train_loader):
                self.optimizer.zero_grad()
                input = input_data.float()
                output, series, prior, _ = self.model(input)

                # calculate Association discrepancy
                series_loss = 0.0
                prior_loss = 0.0
                for u in range(len(prior)):
                    norm_prior = prior[u] / torch.unsqueeze(torch.sum(prior[u], dim=-1), dim=-1).repeat(
                        1, 1, 1, self.win_size)
                    series_loss += (torch.mean(my_kl_loss(series[u], norm_prior.detach()))
                                    + torch.mean(my_kl_loss(norm_prior.detach(), series[u])))
                    prior_loss += (torch.mean(my_kl_loss(norm_prior, series[u].detach()))
                                   + torch.mean(my_kl_loss(series[u].detach(), norm_prior)))
                series_loss = series_loss / len(prior)
                prior_loss = prior_loss / len(prior)

                rec_loss = self.criterion(output, input)
                loss1_list.append((rec_loss - self.k * series_loss).item())
                loss1 = rec_loss - self.k * series_loss
                loss2 = rec_loss + self.k * prior_loss

                # Minimax strategy
                loss1.backward(retain_graph=True)
                loss2.backward()
                self.optimizer.step()
            print("Epoch: {} Train Loss: {:.7f}".format(epoch + 1, np.average(loss1_list)))


solver = Solver(dict(win_size=10, input_c=4, output_c=4, batch_size=4, lr=1e-4, k=3, num_epochs=2))
solver.train()
