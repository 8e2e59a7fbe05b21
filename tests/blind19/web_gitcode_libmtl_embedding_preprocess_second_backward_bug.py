# Source: https://blog.gitcode.com/b0dd65c051e9f54f31a26c2c396a8e05.html
"""MMoE multi-task model with Equal-Weighting (EW) loss, features embedded once in preprocessing.

The post (LibMTL, MMoE, EW weighting) reports "Trying to backward through the
graph a second time" and traces it to the data preprocessing: the sparse id
columns are turned into dense features with ``nn.Embedding`` layers *once*,
before the training loop.  Those feature tensors carry the embedding lookup in
their graph.  The first ``loss.backward()`` of the EW-averaged task losses frees
the saved tensors of that lookup, and the next iteration backpropagates into
the same, already-freed preprocessing graph, so torch raises.

Fix: the post silences the error with ``retain_graph=True``, which keeps the
stale preprocessing graph alive and still never updates the embeddings.  The
fixed version instead moves the embedding tables into the model and looks the
ids up inside ``forward``, so each iteration builds (and frees) its own graph
and the embeddings are trained with the rest of the network.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

NUM_USERS, NUM_ITEMS, EMB_DIM = 50, 40, 8
BATCH, NUM_EXPERTS, EXPERT_DIM, NUM_TASKS = 64, 3, 16, 2

# ---- data preprocessing: sparse ids -> dense features (done once) ----
user_emb = nn.Embedding(NUM_USERS, EMB_DIM)
item_emb = nn.Embedding(NUM_ITEMS, EMB_DIM)
user_ids = torch.randint(0, NUM_USERS, (BATCH,))
item_ids = torch.randint(0, NUM_ITEMS, (BATCH,))
features = torch.cat([user_emb(user_ids), item_emb(item_ids)], dim=1)
labels = [torch.randint(0, 2, (BATCH,)).float() for _ in range(NUM_TASKS)]


class MMoE(nn.Module):
    def __init__(self, in_dim):
        super().__init__()
        self.experts = nn.ModuleList(
            [nn.Sequential(nn.Linear(in_dim, EXPERT_DIM), nn.ReLU()) for _ in range(NUM_EXPERTS)]
        )
        self.gates = nn.ModuleList([nn.Linear(in_dim, NUM_EXPERTS) for _ in range(NUM_TASKS)])
        self.towers = nn.ModuleList([nn.Linear(EXPERT_DIM, 1) for _ in range(NUM_TASKS)])

    def forward(self, x):
        expert_out = torch.stack([e(x) for e in self.experts], dim=1)  # B x E x D
        preds = []
        for gate, tower in zip(self.gates, self.towers):
            w = F.softmax(gate(x), dim=1).unsqueeze(-1)  # B x E x 1
            preds.append(tower((w * expert_out).sum(dim=1)).squeeze(-1))
        return preds


model = MMoE(2 * EMB_DIM)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

for epoch in range(3):
    optimizer.zero_grad()
    preds = model(features)
    task_losses = [F.binary_cross_entropy_with_logits(p, y) for p, y in zip(preds, labels)]
    loss = sum(task_losses) / NUM_TASKS  # EW: equal weighting of the task losses
    loss.backward()  # expect: GG101
    optimizer.step()
    print(epoch, [round(l.item(), 4) for l in task_losses])
