# Source: https://blog.gitcode.com/b0dd65c051e9f54f31a26c2c396a8e05.html
"""MMoE multi-task model with Equal-Weighting (EW) loss (fixed: embeddings looked up in forward).

The post traces "Trying to backward through the graph a second time" to
sparse ids being embedded with ``nn.Embedding`` once, in preprocessing: every
iteration then backpropagated into the same preprocessing graph, which the
first ``backward()`` had freed.  Fix: keep the embedding tables in the model
and look the ids up inside ``forward``, so every iteration builds its own graph
and the embeddings are trained too (instead of ``retain_graph=True``).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

NUM_USERS, NUM_ITEMS, EMB_DIM = 50, 40, 8
BATCH, NUM_EXPERTS, EXPERT_DIM, NUM_TASKS = 64, 3, 16, 2

# ---- data preprocessing: keep the raw sparse ids, embed them in the model ----
user_ids = torch.randint(0, NUM_USERS, (BATCH,))
item_ids = torch.randint(0, NUM_ITEMS, (BATCH,))
labels = [torch.randint(0, 2, (BATCH,)).float() for _ in range(NUM_TASKS)]


class MMoE(nn.Module):
    def __init__(self, in_dim):
        super().__init__()
        self.user_emb = nn.Embedding(NUM_USERS, EMB_DIM)
        self.item_emb = nn.Embedding(NUM_ITEMS, EMB_DIM)
        self.experts = nn.ModuleList(
            [nn.Sequential(nn.Linear(in_dim, EXPERT_DIM), nn.ReLU()) for _ in range(NUM_EXPERTS)]
        )
        self.gates = nn.ModuleList([nn.Linear(in_dim, NUM_EXPERTS) for _ in range(NUM_TASKS)])
        self.towers = nn.ModuleList([nn.Linear(EXPERT_DIM, 1) for _ in range(NUM_TASKS)])

    def forward(self, uid, iid):
        x = torch.cat([self.user_emb(uid), self.item_emb(iid)], dim=1)
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
    preds = model(user_ids, item_ids)
    task_losses = [F.binary_cross_entropy_with_logits(p, y) for p, y in zip(preds, labels)]
    loss = sum(task_losses) / NUM_TASKS  # EW: equal weighting of the task losses
    loss.backward()
    optimizer.step()
    print(epoch, [round(l.item(), 4) for l in task_losses])
