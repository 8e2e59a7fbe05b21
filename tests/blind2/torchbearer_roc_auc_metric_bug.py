# Source: https://github.com/pytorchbearer/torchbearer/issues/424
"""torchbearer's roc_auc_score metric (an EpochLambda) during training: the metric gathers the
model's predictions over the epoch and, at the end, calls
sklearn.metrics.roc_auc_score(y_true.cpu().numpy(), y_pred.cpu().numpy()), but the training
predictions still require grad ("Can't call numpy() on Variable that requires grad"). sklearn is
not installed here, so a rank-based numpy ROC AUC stands in for roc_auc_score; the Trial loop is
written out and the data are random. Concatenating the graph-carrying predictions also keeps every
batch's graph alive for the whole epoch."""
import numpy as np
import torch
import torch.nn as nn


def roc_auc_score(y_true, y_score):
    """Binary ROC AUC as the Mann-Whitney statistic (sklearn.metrics.roc_auc_score stand-in)."""
    order = np.argsort(y_score)
    ranks = np.empty(len(y_score))
    ranks[order] = np.arange(1, len(y_score) + 1)
    n_pos = y_true.sum()
    n_neg = len(y_true) - n_pos
    return (ranks[y_true == 1].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)


class EpochLambda(object):
    """Gathers y_pred / y_true over an epoch and applies metric_function to them at its end."""
    def __init__(self, name, metric_function):
        self.name = name
        self._metric_function = metric_function
        self._y_pred, self._y_true = None, None

    def reset(self):
        self._y_pred, self._y_true = None, None

    def process(self, y_pred, y_true):
        if self._y_pred is None:
            self._y_pred, self._y_true = y_pred, y_true
        else:
            self._y_pred = torch.cat([self._y_pred, y_pred], dim=0)  # expect: GG202
            self._y_true = torch.cat([self._y_true, y_true], dim=0)

    def process_final(self):
        return self._metric_function(self._y_pred, self._y_true)


class RocAucScore(EpochLambda):
    def __init__(self):
        super(RocAucScore, self).__init__(
            'roc_auc_score',
            lambda y_pred, y_true: roc_auc_score(y_true.cpu().numpy(), y_pred.cpu().numpy()))  # expect: GG107


class Trial(object):
    def __init__(self, model, optimizer, criterion, metrics):
        self.model, self.optimizer, self.criterion, self.metrics = model, optimizer, criterion, metrics

    def run(self, generator, epochs=1):
        history = []
        for epoch in range(epochs):
            self.model.train()
            for metric in self.metrics:
                metric.reset()
            for x, y_true in generator:
                y_pred = self.model(x).squeeze(1)
                loss = self.criterion(y_pred, y_true)
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
                for metric in self.metrics:
                    metric.process(torch.sigmoid(y_pred), y_true)
            history.append({metric.name: metric.process_final() for metric in self.metrics})
        return history


model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
generator = [(torch.randn(8, 6), torch.tensor([0., 1.] * 4)) for _ in range(3)]
trial = Trial(model, optimizer, nn.BCEWithLogitsLoss(), metrics=[RocAucScore()])
trial.run(generator, epochs=1)
