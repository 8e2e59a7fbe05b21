# Source: https://github.com/fedbiomed/fedbiomed/issues/407
"""Fed-BioMed's validation on the develop branch of November 2022, with the notebook's PyTorch
training plan (part 3.1 of general-training-and-validation.ipynb): its custom testing_step
returns [nll loss, nll loss, accuracy] computed with grad enabled, and the node's testing routine
turns that list into an array for the metric history, calling numpy() on losses that require grad
("Metric[Custom]: [tensor(0.1392, grad_fn=<NllLossBackward0>), ...]"). TorchTrainingPlan's
training/testing routines and the history monitor are small stand-ins doing the same tensor
operations (the routine's exact code is not in the stored thread); MNIST is random 28x28 images."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class HistoryMonitor:
    def __init__(self):
        self.history = []

    def add_scalar(self, metric, iteration, epoch, test=False, test_on_global_updates=False):
        self.history.append((metric, iteration, epoch, test, test_on_global_updates))
        print("Validation:", metric)


class TorchTrainingPlan:
    def __init__(self):
        self._model = self.init_model()
        self._optimizer = torch.optim.Adam(self._model.parameters(), lr=1e-3)
        self.training_data_loader = [(torch.rand(8, 1, 28, 28), torch.randint(0, 10, (8,))) for _ in range(2)]
        self.testing_data_loader = [(torch.rand(16, 1, 28, 28), torch.randint(0, 10, (16,)))]

    def model(self):
        return self._model

    def training_routine(self, epochs=1):
        self._model.train()
        for epoch in range(1, epochs + 1):
            for batch_idx, (data, target) in enumerate(self.training_data_loader):
                self._optimizer.zero_grad()
                res = self.training_step(data, target)
                res.backward()
                self._optimizer.step()

    @staticmethod
    def _create_metric_result_dict(metric, metric_name='Custom'):
        metric = np.array(metric)  # expect: GG107
        if metric.ndim == 0:
            return {metric_name: float(metric)}
        return {f"{metric_name}_{i + 1}": float(value) for i, value in enumerate(metric)}

    def testing_routine(self, history_monitor, before_train: bool):
        self._model.eval()
        for batch_ndx, (data, target) in enumerate(self.testing_data_loader, 1):
            m_value = self.testing_step(data, target)
            metric_dict = self._create_metric_result_dict(m_value)
            history_monitor.add_scalar(metric=metric_dict, iteration=batch_ndx, epoch=None,
                                       test=True, test_on_global_updates=before_train)


class MyTrainingPlan(TorchTrainingPlan):
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 8, 3, 1)
            self.conv2 = nn.Conv2d(8, 16, 3, 1)
            self.dropout1 = nn.Dropout(0.25)
            self.fc1 = nn.Linear(16 * 12 * 12, 32)
            self.fc2 = nn.Linear(32, 10)

        def forward(self, x):
            x = F.relu(self.conv1(x))
            x = F.relu(self.conv2(x))
            x = F.max_pool2d(x, 2)
            x = self.dropout1(x)
            x = torch.flatten(x, 1)
            x = F.relu(self.fc1(x))
            x = self.fc2(x)
            return F.log_softmax(x, dim=1)

    def init_model(self):
        return self.Net()

    def training_step(self, data, target):
        output = self.model().forward(data)
        loss = torch.nn.functional.nll_loss(output, target)
        return loss

    def testing_step(self, data, target):
        pred = self.model().forward(data)
        loss1 = torch.nn.functional.nll_loss(pred, target)
        loss2 = torch.nn.functional.nll_loss(pred, target)
        acc = (pred.argmax(dim=1) == target).float().mean()
        return [loss1, loss2, acc]


if __name__ == "__main__":
    plan = MyTrainingPlan()
    monitor = HistoryMonitor()
    for round_ in range(2):
        plan.testing_routine(monitor, before_train=True)
        plan.training_routine(epochs=1)
        plan.testing_routine(monitor, before_train=False)
