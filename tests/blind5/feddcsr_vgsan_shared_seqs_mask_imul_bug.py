# Source: https://github.com/orion-orion/FedDCSR/issues/3
"""Training FedDCSR's VGSAN sequential recommender: its Encoder runs two SelfAttention modules,
encoder_mu and encoder_logvar, on the same seqs_emb tensor, and SelfAttention.forward begins with
`seqs *= ~timeline_mask.unsqueeze(-1)`. encoder_mu's first attention LayerNorm saved that tensor
(`Q = self.attention_layernorms[i](seqs)`), and encoder_logvar's `*=` then writes into it again, so
loss.backward() fails (anomaly detection: "Error detected in NativeLayerNormBackward0" at that Q
line; the issue replaces the `*=` by `seqs = seqs * (~timeline_mask.unsqueeze(-1))`). The model
is the repository's (models/vgsan: PointWiseFeedForward, SelfAttention, Encoder, VGSAN with its
GCN layer) with models/vgsan/config.py inlined at small sizes, and Trainer.train_batch with
vgsan_loss_fn; random sessions and a random item graph stand in for the Amazon domains."""
import math
from types import SimpleNamespace

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

# models/vgsan/config.py
hidden_size = 16  # Lantent dim
num_heads = 2  # Number of self-attention heads
num_blocks = 2  # Number of self-attention blocks
num_gnn_layers = 1  # GNN depth
dropout_rate = 0.3  # Dropout rate p
leakey = 0.1  # Hyperparameter of LeakyReLU
hidden_act = "relu"  # Hidden layer activation function

ACT2FN = {"relu": F.relu}


class PointWiseFeedForward(nn.Module):
    def __init__(self, hidden_units, dropout_rate):
        super(PointWiseFeedForward, self).__init__()
        self.conv1 = nn.Conv1d(hidden_units, hidden_units, kernel_size=1)
        self.dropout1 = nn.Dropout(p=dropout_rate)
        self.feedforward_act_fn = ACT2FN[hidden_act]
        self.conv2 = nn.Conv1d(hidden_units, hidden_units, kernel_size=1)
        self.dropout2 = nn.Dropout(p=dropout_rate)

    def forward(self, inputs):
        outputs = self.feedforward_act_fn(self.dropout1(self.conv1(inputs.transpose(-1, -2))))
        outputs = self.dropout2(self.conv2(outputs))
        # As Conv1D requires (N, C, Length)
        outputs = outputs.transpose(-1, -2)
        outputs += inputs
        return outputs


class SelfAttention(nn.Module):
    def __init__(self, num_items, args):
        super(SelfAttention, self).__init__()
        self.num_items = num_items
        self.device = "cuda:%s" % args.gpu if args.cuda else "cpu"
        self.attention_layernorms = nn.ModuleList()
        self.attention_layers = nn.ModuleList()
        self.forward_layernorms = nn.ModuleList()
        self.forward_layers = nn.ModuleList()
        self.last_layernorm = nn.LayerNorm(hidden_size, eps=1e-8)
        for _ in range(num_blocks):
            self.attention_layernorms.append(nn.LayerNorm(hidden_size, eps=1e-8))
            self.attention_layers.append(nn.MultiheadAttention(hidden_size, num_heads, dropout_rate))
            self.forward_layernorms.append(nn.LayerNorm(hidden_size, eps=1e-8))
            self.forward_layers.append(PointWiseFeedForward(hidden_size, dropout_rate))

    def forward(self, seqs, seqs_data):
        timeline_mask = torch.BoolTensor(seqs_data.cpu() == self.num_items).to(self.device)
        seqs *= ~timeline_mask.unsqueeze(-1)  # Broadcast in the last dimension

        # Length of the time dimension for enforce causality
        tl = seqs.shape[1]
        attention_mask = ~torch.tril(torch.ones((tl, tl), dtype=torch.bool)).to(self.device)

        for i in range(len(self.attention_layers)):
            seqs = torch.transpose(seqs, 0, 1)
            Q = self.attention_layernorms[i](seqs)
            mha_outputs, _ = self.attention_layers[i](Q, seqs, seqs, attn_mask=attention_mask)
            seqs = Q + mha_outputs
            seqs = torch.transpose(seqs, 0, 1)

            seqs = self.forward_layernorms[i](seqs)
            seqs = self.forward_layers[i](seqs)
            seqs *= ~timeline_mask.unsqueeze(-1)

        log_feats = self.last_layernorm(seqs)  # (U, T, C) -> (U, -1, C)
        return log_feats


class GraphConvolution(nn.Module):
    def __init__(self, in_features, out_features, bias=True):
        super(GraphConvolution, self).__init__()
        self.weight = nn.Parameter(torch.FloatTensor(in_features, out_features))
        self.bias = nn.Parameter(torch.FloatTensor(out_features)) if bias else None
        stdv = 1. / math.sqrt(self.weight.size(1))
        self.weight.data.uniform_(-stdv, stdv)
        if self.bias is not None:
            self.bias.data.uniform_(-stdv, stdv)

    def forward(self, input, adj):
        output = torch.spmm(adj, input)
        if self.bias is not None:
            return output + self.bias
        return output


class GCNLayer(nn.Module):
    def __init__(self, args):
        super(GCNLayer, self).__init__()
        self.dropout = dropout_rate
        self.layer_number = num_gnn_layers
        self.encoder = nn.ModuleList(GraphConvolution(hidden_size, hidden_size) for _ in range(self.layer_number))

    def forward(self, fea, adj):
        learn_fea = fea
        tmp_fea = fea
        for layer in self.encoder:
            learn_fea = F.dropout(learn_fea, self.dropout, training=self.training)
            learn_fea = layer(learn_fea, adj)
            tmp_fea = tmp_fea + learn_fea
        return tmp_fea / (self.layer_number + 1)


class Encoder(nn.Module):
    def __init__(self, num_items, args):
        super(Encoder, self).__init__()
        self.encoder_mu = SelfAttention(num_items, args)
        self.encoder_logvar = SelfAttention(num_items, args)

    def forward(self, seqs, seqs_data):
        mu = self.encoder_mu(seqs, seqs_data)
        logvar = self.encoder_logvar(seqs, seqs_data)
        return mu, logvar


class VGSAN(nn.Module):
    def __init__(self, num_items, args):
        super(VGSAN, self).__init__()
        self.device = "cuda:%s" % args.gpu if args.cuda else "cpu"
        self.item_emb = nn.Embedding(num_items + 1, hidden_size, padding_idx=num_items)
        self.pos_emb = nn.Embedding(args.max_seq_len, hidden_size)
        self.GNN_encoder = GCNLayer(args)
        self.encoder = Encoder(num_items, args)
        self.linear = nn.Linear(hidden_size, num_items)
        self.linear_pad = nn.Linear(hidden_size, 1)
        self.LayerNorm = nn.LayerNorm(hidden_size, eps=1e-12)
        self.dropout = nn.Dropout(0.3)

    def my_index_select_embedding(self, memory, index):
        tmp = list(index.size()) + [-1]
        index = index.view(-1)
        ans = memory(index)
        return ans.view(tmp)

    def my_index_select(self, memory, index):
        tmp = list(index.size()) + [-1]
        index = index.view(-1)
        ans = torch.index_select(memory, 0, index)
        return ans.view(tmp)

    def graph_convolution(self, adj):
        self.item_index = torch.arange(0, self.item_emb.num_embeddings, 1).to(self.device)
        fea = self.my_index_select_embedding(self.item_emb, self.item_index)
        self.item_graph_embs = self.GNN_encoder(fea, adj)

    def add_position_embedding(self, seqs, seq_embeddings):
        seq_length = seqs.size(1)
        position_ids = torch.arange(seq_length, dtype=torch.long, device=seqs.device)
        position_ids = position_ids.unsqueeze(0).expand_as(seqs)
        position_embeddings = self.pos_emb(position_ids)
        seq_embeddings += position_embeddings
        seq_embeddings = self.LayerNorm(seq_embeddings)
        seq_embeddings = self.dropout(seq_embeddings)
        return seq_embeddings  # (batch_size, seq_len, hidden_size)

    def forward(self, seqs):
        seqs_emb = self.my_index_select(self.item_graph_embs, seqs) + self.item_emb(seqs)
        seqs_emb *= self.item_emb.embedding_dim ** 0.5
        seqs_emb = self.add_position_embedding(seqs, seqs_emb)

        mu, logvar = self.encoder(seqs_emb, seqs)
        z = self.reparameterization(mu, logvar)

        result = self.linear(z)
        result_pad = self.linear_pad(z)
        return torch.cat((result, result_pad), dim=-1), mu, logvar

    def reparameterization(self, mu, logvar):
        std = torch.exp(0.5 * logvar)
        eps = torch.randn_like(std)
        return mu + std * eps


class Trainer:
    def __init__(self, num_items, args):
        self.args = args
        self.model = VGSAN(num_items, args)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=args.lr)
        self.cs_criterion = nn.CrossEntropyLoss(reduction='none')
        self.step = 0

    def kl_anneal_function(self, anneal_cap, step, total_annealing_step):
        return min(anneal_cap, step / total_annealing_step)

    def train_batch(self, sessions, adj, num_items):
        self.optimizer.zero_grad()
        self.model.graph_convolution(adj)
        sessions = [torch.LongTensor(x) for x in sessions]
        seq, ground, ground_mask = sessions
        result, mu, logvar = self.model(seq)
        loss = self.vgsan_loss_fn(result, mu, logvar, ground, ground_mask, num_items, self.step)
        loss.backward()  # expect: GG103
        self.optimizer.step()
        self.step += 1
        return loss.item()

    def vgsan_loss_fn(self, result, mu, logvar, ground, ground_mask, num_items, step):
        recons_loss = self.cs_criterion(result.reshape(-1, num_items + 1), ground.reshape(-1))
        recons_loss = (recons_loss * (ground_mask.reshape(-1))).mean()
        kld_loss = -0.5 * torch.sum(1 + logvar - mu ** 2 - logvar.exp(), dim=-1).reshape(-1)
        kld_loss = (kld_loss * (ground_mask.reshape(-1))).mean()
        kld_weight = self.kl_anneal_function(self.args.anneal_cap, step, self.args.total_annealing_step)
        return recons_loss + kld_weight * kld_loss


rng = np.random.default_rng(0)
num_items, seq_len = 30, 6
args = SimpleNamespace(gpu=0, cuda=False, max_seq_len=seq_len, lr=1e-3, anneal_cap=1.0, total_annealing_step=10)
adj = torch.from_numpy((rng.random((num_items + 1, num_items + 1)) < 0.1).astype(np.float32) / 3).to_sparse()
trainer = Trainer(num_items, args)
for batch in range(2):
    seq = rng.integers(0, num_items + 1, size=(4, seq_len))
    ground = rng.integers(0, num_items + 1, size=(4, seq_len))
    ground_mask = (ground != num_items).astype(np.int64)
    print(trainer.train_batch([seq, ground, ground_mask], adj, num_items))
