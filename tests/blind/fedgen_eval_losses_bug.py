# Source: https://github.com/zhuangdizhu/FedGen/issues/1
"""FedGen's server evaluate(): every user's test() returns its correct count, its loss (a tensor
computed with grad enabled) and its sample count, and the server averages the losses with
np.sum over a list of loss * samples products, which calls numpy() on tensors that require grad."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class User:
    def __init__(self, model, n):
        self.model = model
        self.test_data = (torch.randn(n, 6), torch.randint(0, 3, (n,)))

    def test(self):
        self.model.eval()
        x, y = self.test_data
        output = self.model(x)
        loss = F.cross_entropy(output, y)
        test_acc = (torch.argmax(output, dim=1) == y).sum().item()
        return test_acc, loss, y.shape[0]


class Server:
    def __init__(self, users):
        self.users = users
        self.metrics = {"glob_acc": [], "glob_loss": []}

    def test(self):
        num_samples, tot_correct, losses = [], [], []
        for c in self.users:
            ct, c_loss, ns = c.test()
            tot_correct.append(ct)
            num_samples.append(ns)
            losses.append(c_loss)
        return num_samples, tot_correct, losses

    def evaluate(self):
        test_ids, test_samples, test_accs, test_losses = [], *self.test()
        glob_acc = np.sum(test_accs) * 1.0 / np.sum(test_samples)
        glob_loss = np.sum([x * y for (x, y) in zip(test_samples, test_losses)]).item() / np.sum(test_samples)  # expect: GG107
        self.metrics["glob_acc"].append(glob_acc)
        self.metrics["glob_loss"].append(glob_loss)
        print("Average Global Accuracy = {:.4f}, Loss = {:.2f}.".format(glob_acc, glob_loss))


global_model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3))
server = Server([User(global_model, n) for n in (5, 7)])
server.evaluate()
