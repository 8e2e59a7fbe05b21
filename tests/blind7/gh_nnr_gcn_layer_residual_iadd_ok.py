# Source: https://github.com/Veason-silverbullet/NNR/issues/3
"""NNR with the maintainers' fix: GCNLayer adds the residual out of place
(`out = out + feature`), so the ReLU output F.relu saved stays at its version. Same news encoder,
user encoder and random batches."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class GCNLayer(nn.Module):
    def __init__(self, in_dim, out_dim, residual=False, layer_norm=False):
        super(GCNLayer, self).__init__()
        self.residual = residual
        self.layer_norm = layer_norm
        if self.residual and in_dim != out_dim:
            raise Exception('To facilitate residual connection, in_dim must equal to out_dim')
        self.W = nn.Linear(in_dim, out_dim, bias=True)
        if self.layer_norm:
            self.layer_normalization = nn.LayerNorm(normalized_shape=[out_dim])

    def forward(self, feature, graph):
        out = self.W(torch.bmm(graph, feature))  # [batch_size, node_num, feature_num]
        if self.layer_norm:
            out = self.layer_normalization(out)  # [batch_size, node_num, feature_num]
        out = F.relu(out)                        # [batch_size, node_num, feature_num]
        if self.residual:
            out = out + feature                      # [batch_size, node_num, feature_num]
        return out


class GCN(nn.Module):
    def __init__(self, in_dim, out_dim, hidden_dim=0, num_layers=1, dropout=0.1, residual=False, layer_norm=False):
        super(GCN, self).__init__()
        self.num_layers = num_layers
        self.gcn_layers = []
        if self.num_layers == 1:
            self.gcn_layers.append(GCNLayer(in_dim, out_dim, residual=residual, layer_norm=layer_norm))
        else:
            self.dropout = nn.Dropout(dropout, inplace=True)
            self.gcn_layers.append(GCNLayer(in_dim, hidden_dim, residual=residual, layer_norm=layer_norm))
            for i in range(1, self.num_layers - 1):
                self.gcn_layers.append(GCNLayer(hidden_dim, hidden_dim, residual=residual, layer_norm=layer_norm))
            self.gcn_layers.append(GCNLayer(hidden_dim, out_dim, residual=residual, layer_norm=layer_norm))
        self.gcn_layers = nn.ModuleList(self.gcn_layers)

    def forward(self, feature, graph):
        out = feature
        for i in range(self.num_layers - 1):
            out = self.dropout(self.gcn_layers[i](out, graph))
        out = self.gcn_layers[self.num_layers - 1](out, graph)
        return out


class NewsEncoder(nn.Module):
    def __init__(self, vocab_size, dim):
        super(NewsEncoder, self).__init__()
        self.word_embedding = nn.Embedding(vocab_size, dim)
        self.gcn = GCN(dim, dim, hidden_dim=dim, num_layers=2, residual=True, layer_norm=True)
        self.attention = nn.Linear(dim, 1, bias=False)

    def forward(self, title, graph):
        # title: [batch_size, news_num, title_length]; graph: [batch_size, news_num, L, L]
        batch_size, news_num, length = title.shape
        w = self.word_embedding(title).view(batch_size * news_num, length, -1)
        h = self.gcn(w, graph.view(batch_size * news_num, length, length))
        alpha = F.softmax(self.attention(torch.tanh(h)), dim=1)
        return (alpha * h).sum(dim=1).view(batch_size, news_num, -1)


class Model(nn.Module):
    def __init__(self, vocab_size=50, dim=16):
        super(Model, self).__init__()
        self.news_encoder = NewsEncoder(vocab_size, dim)

    def forward(self, user_title, user_graph, news_title, news_graph):
        user_news = self.news_encoder(user_title, user_graph)       # [batch_size, history, dim]
        user_representation = user_news.mean(dim=1, keepdim=True)   # [batch_size, 1, dim]
        news_representation = self.news_encoder(news_title, news_graph)  # [batch_size, 1 + neg, dim]
        return (news_representation * user_representation).sum(dim=2)   # [batch_size, 1 + neg]


def random_batch(batch_size=4, history=3, candidates=5, length=6, vocab_size=50):
    def titles(n):
        title = torch.randint(1, vocab_size, (batch_size, n, length))
        graph = (torch.rand(batch_size, n, length, length) > 0.5).float() + torch.eye(length)
        return title, graph / graph.sum(dim=-1, keepdim=True)
    return (*titles(history), *titles(candidates))


model = Model()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
model.train()
for step in range(3):
    user_title, user_graph, news_title, news_graph = random_batch()
    logits = model(user_title, user_graph, news_title, news_graph)
    loss = F.cross_entropy(logits, torch.zeros(logits.size(0), dtype=torch.long))  # the clicked news is first
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(step, loss.item())
