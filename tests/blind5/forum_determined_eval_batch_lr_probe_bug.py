# Source: https://github.com/determined-ai/determined/issues/7043
"""A graph contrastive model trained as a Determined PyTorchTrial; the reporter's evaluate_batch
fits PyGCL's LREvaluator (a logistic-regression probe trained with Adam for many epochs) on the
encoder's node embeddings. Determined runs evaluate_batch under torch.no_grad(), so inside the
probe's own training loop nothing records a graph: LREvaluator.evaluate's loss.backward() raises
"element 0 of tensors does not require grad and does not have a grad_fn". A small harness stands in
for Determined's trial controller (train_batch with grad, evaluate_batch under no_grad, as the
platform does); a two-layer dense GCN with a feature-dropout contrastive loss stands in for the
reporter's encoder; LREvaluator is PyGCL's, without tqdm/sklearn (micro-F1 on one label per node
is the accuracy); a random graph stands in for the dataset."""
import numpy as np
import torch
from torch import nn
from torch.optim import Adam
import torch.nn.functional as F


class LRModel(nn.Module):
    def __init__(self, num_features, num_classes):
        super(LRModel, self).__init__()
        self.fc = nn.Linear(num_features, num_classes)
        torch.nn.init.xavier_uniform_(self.fc.weight.data)

    def forward(self, x):
        z = self.fc(x)
        return z


def micro_f1(y_true, y_pred):
    return float(np.mean(y_true == y_pred))


class LREvaluator:
    def __init__(self, num_epochs: int = 100, learning_rate: float = 0.01,
                 weight_decay: float = 0.0, test_interval: int = 20):
        self.num_epochs = num_epochs
        self.learning_rate = learning_rate
        self.weight_decay = weight_decay
        self.test_interval = test_interval

    def __call__(self, x, y, split):
        return self.evaluate(x, y, split)

    def evaluate(self, x: torch.FloatTensor, y: torch.LongTensor, split: dict):
        x = x.detach()
        input_dim = x.size()[1]
        num_classes = y.max().item() + 1
        classifier = LRModel(input_dim, num_classes)
        optimizer = Adam(classifier.parameters(), lr=self.learning_rate, weight_decay=self.weight_decay)
        output_fn = nn.LogSoftmax(dim=-1)
        criterion = nn.NLLLoss()

        best_val_micro = 0
        best_test_micro = 0
        for epoch in range(self.num_epochs):
            classifier.train()
            optimizer.zero_grad()

            output = classifier(x[split['train']])
            loss = criterion(output_fn(output), y[split['train']])

            loss.backward()  # expect: GG104
            optimizer.step()

            if (epoch + 1) % self.test_interval == 0:
                classifier.eval()
                y_test = y[split['test']].detach().cpu().numpy()
                y_pred = classifier(x[split['test']]).argmax(-1).detach().cpu().numpy()
                test_micro = micro_f1(y_test, y_pred)
                y_val = y[split['valid']].detach().cpu().numpy()
                y_pred = classifier(x[split['valid']]).argmax(-1).detach().cpu().numpy()
                val_micro = micro_f1(y_val, y_pred)
                if val_micro > best_val_micro:
                    best_val_micro = val_micro
                    best_test_micro = test_micro
        return {'micro_f1': best_test_micro}


class GCNEncoder(nn.Module):
    def __init__(self, in_dim, hidden_dim):
        super().__init__()
        self.lin1 = nn.Linear(in_dim, hidden_dim)
        self.lin2 = nn.Linear(hidden_dim, hidden_dim)

    def forward(self, x, adj):
        x = F.relu(adj @ self.lin1(x))
        return adj @ self.lin2(x)


class Batch:
    def __init__(self, x, adj, y):
        self.x, self.adj, self.y = x, adj, y


def get_split(num_samples, train_ratio=0.3, test_ratio=0.1):
    perm = torch.randperm(num_samples)
    n_train, n_test = int(num_samples * train_ratio), int(num_samples * test_ratio)
    return {'train': perm[:n_train], 'test': perm[n_train:n_train + n_test], 'valid': perm[n_train + n_test:]}


class GraphCLTrial:
    def __init__(self, in_dim, hidden_dim, num_nodes):
        self.model = GCNEncoder(in_dim, hidden_dim)
        self.optimizer = Adam(self.model.parameters(), lr=0.01)
        self.split = get_split(num_samples=num_nodes)

    def train_batch(self, batch):
        z1 = self.model(F.dropout(batch.x, 0.2), batch.adj)
        z2 = self.model(F.dropout(batch.x, 0.2), batch.adj)
        sim = F.normalize(z1, dim=1) @ F.normalize(z2, dim=1).t() / 0.5
        loss = F.cross_entropy(sim, torch.arange(sim.size(0)))
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return {"loss": loss.item()}

    def evaluate_batch(self, batch):
        # self.model.eval()
        z = self.model(batch.x, batch.adj)
        result = LREvaluator()(z, batch.y, self.split)

        return {
            "micro_f1": result["micro_f1"]
        }


def random_graph(num_nodes, in_dim, num_classes):
    a = (torch.rand(num_nodes, num_nodes) < 0.1).float()
    a = ((a + a.t()) > 0).float() + torch.eye(num_nodes)
    d = a.sum(1).rsqrt()
    return Batch(torch.randn(num_nodes, in_dim), d[:, None] * a * d[None, :], torch.randint(0, num_classes, (num_nodes,)))


batch = random_graph(40, 16, 3)
trial = GraphCLTrial(16, 32, 40)
for epoch in range(2):
    print(trial.train_batch(batch))
    with torch.no_grad():  # how Determined runs evaluate_batch
        print(trial.evaluate_batch(batch))
