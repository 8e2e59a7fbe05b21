# Source: https://discuss.pytorch.org/t/how-to-do-only-one-forward-propagation-per-epoch-and-multiple-backward-propagations-on-graph/65396
"""The fix: every optimizer step changes the weights the embeddings come from, so each batch
needs embeddings computed by a fresh forward, the poster's own code A: `model(G)` inside the batch
loop. Each backward then walks a graph built for it."""
import torch
import torch.nn as nn
import torch.nn.functional as F

n_users, n_items = 12, 20
interactions = (torch.rand(n_users, n_items) < 0.2).float()
# bipartite adjacency with self-loops, symmetrically normalised
A = torch.zeros(n_users + n_items, n_users + n_items)
A[:n_users, n_users:] = interactions
A[n_users:, :n_users] = interactions.t()
A = A + torch.eye(n_users + n_items)
deg = A.sum(1)
G = A / torch.sqrt(deg[:, None] * deg[None, :])


class Model(nn.Module):
    def __init__(self, G, in_dim, hidden_dim, out_dim):
        super().__init__()
        self.n_nodes = G.shape[0]
        self.features = nn.Parameter(torch.randn(self.n_nodes, in_dim) * 0.1)
        self.layer1 = nn.Linear(in_dim, hidden_dim)
        self.layer2 = nn.Linear(hidden_dim, out_dim)

    def forward(self, G):
        h = F.relu(self.layer1(G @ self.features))
        h = self.layer2(G @ h)
        return h[:n_users], h[n_users:]

    def getloss(self, batch_data, user_embedding, item_embedding):
        users, pos, neg = batch_data
        pos_score = (user_embedding[users] * item_embedding[pos]).sum(1)
        neg_score = (user_embedding[users] * item_embedding[neg]).sum(1)
        return -F.logsigmoid(pos_score - neg_score).mean()


def make_dataset(n_batches, batch_size):
    users_all, items_all = interactions.nonzero(as_tuple=True)
    batches = []
    for _ in range(n_batches):
        pick = torch.randint(0, len(users_all), (batch_size,))
        batches.append((users_all[pick], items_all[pick], torch.randint(0, n_items, (batch_size,))))
    return batches


dataset = make_dataset(n_batches=4, batch_size=8)

# code A
model = Model(G, 8, 8, 8)
optimizer = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
for epoch in range(2):
    for batch_data in dataset:
        optimizer.zero_grad()
        user_embedding, item_embedding = model(G)
        loss = model.getloss(batch_data, user_embedding, item_embedding)
        loss.backward()
        optimizer.step()
    print(epoch, loss.item())
