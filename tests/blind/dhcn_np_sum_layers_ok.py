# Source: https://github.com/xiaxin1998/DHCN/issues/8
"""DHCN's HyperConv layer (model.py): item embeddings are propagated through the hypergraph layer
by layer, each layer's result appended to a list, and the layers are averaged with
torch operations (torch.stack(final).sum(0)), so the average stays in the graph and trains (the
maintainer's np.sum(final.detach().numpy(), 0) runs too, but cuts the embeddings off the loss)."""
import torch
import torch.nn as nn


class HyperConv(nn.Module):
    def __init__(self, layers, emb_size=8):
        super().__init__()
        self.emb_size = emb_size
        self.layers = layers

    def forward(self, adjacency, embedding):
        item_embeddings = embedding
        final = [item_embeddings]
        for i in range(self.layers):
            item_embeddings = torch.sparse.mm(adjacency, item_embeddings)
            final.append(item_embeddings)
        item_embeddings = torch.stack(final).sum(0) / (self.layers + 1)
        return item_embeddings


class DHCN(nn.Module):
    def __init__(self, n_node=10, emb_size=8, layers=2):
        super().__init__()
        self.embedding = nn.Embedding(n_node, emb_size)
        self.HyperGraph = HyperConv(layers, emb_size)

    def forward(self, adjacency, session_items):
        item_embeddings_hg = self.HyperGraph(adjacency, self.embedding.weight)
        sess_emb = item_embeddings_hg[session_items].mean(1)
        return sess_emb @ item_embeddings_hg.t()


n = 10
dense = (torch.rand(n, n) > 0.6).float()
adjacency = (dense / dense.sum(1, keepdim=True).clamp(min=1)).to_sparse()
model = DHCN(n)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
scores = model(adjacency, torch.tensor([[1, 2, 3], [4, 5, 6]]))
loss = nn.functional.cross_entropy(scores, torch.tensor([7, 8]))
optimizer.zero_grad()
loss.backward()
optimizer.step()
