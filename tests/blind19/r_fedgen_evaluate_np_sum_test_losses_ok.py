# Source: https://github.com/zhuangdizhu/FedGen/issues/15
"""FedGen's FedAvg server: Server.evaluate() sums per-user test losses with numpy.

Each round, FedAvg.train() sends the global model to the users and calls ``self.evaluate()``.
Server.test() collects every user's ``User.test()`` result; User.test() runs the model on its full
test set outside ``torch.no_grad()`` and returns ``loss``, a tensor with a grad_fn.  evaluate()
then builds ``np.sum([x * y.detach() for (x, y) in zip(test_samples, test_losses)])``: numpy converts each
0-d tensor through ``Tensor.__array__`` -> ``.numpy()``, and torch raises "Can't call numpy() on
Tensor that requires grad".

Fix (the reporter's, and the one upstream later committed; applied here): detach the losses before numpy sees
them (``y.detach()``).  The real data loaders / optimizer / RUNCONFIGS are replaced by small random
stand-ins; the Server/User/FedAvg classes keep FedGen's structure.
"""
import copy
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

METRICS = ['glob_acc', 'per_acc', 'glob_loss', 'per_loss', 'user_train_time', 'server_agg_time']


class Args:
    dataset = "Mnist-alpha0.1-ratio0.5"
    num_glob_iters = 2
    local_epochs = 1
    batch_size = 8
    learning_rate = 0.01
    K = 2
    num_users = 3
    beta = 1.0
    lamda = 1
    algorithm = "FedAvg"
    result_path = "results"


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(20, 16)
        self.fc2 = nn.Linear(16, 4)

    def forward(self, x):
        out = F.relu(self.fc1(x))
        return {'output': F.log_softmax(self.fc2(out), dim=1)}


class User:
    def __init__(self, args, id, model, train_data, test_data):
        self.model = copy.deepcopy(model[0])
        self.model_name = model[1]
        self.id = id
        self.train_samples = len(train_data)
        self.test_samples = len(test_data)
        self.batch_size = args.batch_size
        self.learning_rate = args.learning_rate
        self.local_epochs = args.local_epochs
        self.K = args.K
        self.trainloader = DataLoader(train_data, self.batch_size, shuffle=True, drop_last=True)
        self.testloaderfull = DataLoader(test_data, self.test_samples)
        self.iter_trainloader = iter(self.trainloader)
        self.local_model = copy.deepcopy(list(self.model.parameters()))
        self.loss = nn.NLLLoss()
        self.optimizer = torch.optim.SGD(self.model.parameters(), lr=self.learning_rate)

    def set_parameters(self, model, beta=1):
        for old_param, new_param, local_param in zip(self.model.parameters(), model.parameters(), self.local_model):
            old_param.data = new_param.data.clone()
            local_param.data = new_param.data.clone()

    def clone_model_paramenter(self, param, clone_param):
        with torch.no_grad():
            for param, clone_param in zip(param, clone_param):
                clone_param.data = param.data.clone()
        return clone_param

    def test(self):
        self.model.eval()
        test_acc = 0
        loss = 0
        for x, y in self.testloaderfull:
            output = self.model(x)['output']
            loss += self.loss(output, y)
            test_acc += (torch.sum(torch.argmax(output, dim=1) == y)).item()
        return test_acc, loss, y.shape[0]

    def get_next_train_batch(self):
        try:
            (X, y) = next(self.iter_trainloader)
        except StopIteration:
            self.iter_trainloader = iter(self.trainloader)
            (X, y) = next(self.iter_trainloader)
        return {'X': X, 'y': y}


class UserAVG(User):
    def train(self, glob_iter, personalized=False):
        self.model.train()
        for epoch in range(1, self.local_epochs + 1):
            self.model.train()
            for i in range(self.K):
                result = self.get_next_train_batch()
                X, y = result['X'], result['y']
                self.optimizer.zero_grad()
                output = self.model(X)['output']
                loss = self.loss(output, y)
                loss.backward()
                self.optimizer.step()
            self.clone_model_paramenter(self.model.parameters(), self.local_model)


class Server:
    def __init__(self, args, model, seed):
        self.num_glob_iters = args.num_glob_iters
        self.model = copy.deepcopy(model[0])
        self.model_name = model[1]
        self.users = []
        self.selected_users = []
        self.num_users = args.num_users
        self.algorithm = args.algorithm
        self.personalized = 'pFed' in self.algorithm
        self.mode = 'partial' if 'partial' in self.algorithm.lower() else 'all'
        self.seed = seed
        self.metrics = {key: [] for key in METRICS}
        self.timestamp = None
        self.total_train_samples = 0

    def send_parameters(self, mode='all', beta=1):
        for user in self.users:
            user.set_parameters(self.model, beta=beta)

    def add_parameters(self, user, ratio):
        for server_param, user_param in zip(self.model.parameters(), user.model.parameters()):
            server_param.data = server_param.data + user_param.data.clone() * ratio

    def aggregate_parameters(self):
        for param in self.model.parameters():
            param.data = torch.zeros_like(param.data)
        total_train = 0
        for user in self.selected_users:
            total_train += user.train_samples
        for user in self.selected_users:
            self.add_parameters(user, user.train_samples / total_train)

    def select_users(self, round, num_users):
        if num_users == len(self.users):
            print("All users are selected")
            return self.users
        num_users = min(num_users, len(self.users))
        return np.random.choice(self.users, num_users, replace=False)

    def test(self, selected=False):
        num_samples = []
        tot_correct = []
        losses = []
        users = self.selected_users if selected else self.users
        for c in users:
            ct, c_loss, ns = c.test()
            tot_correct.append(ct * 1.0)
            num_samples.append(ns)
            losses.append(c_loss)
        ids = [c.id for c in self.users]
        return ids, num_samples, tot_correct, losses

    def evaluate(self, save=True, selected=False):
        test_ids, test_samples, test_accs, test_losses = self.test(selected=selected)
        glob_acc = np.sum(test_accs) * 1.0 / np.sum(test_samples)
        glob_loss = np.sum([x * y.detach() for (x, y) in zip(test_samples, test_losses)]).item() / np.sum(test_samples)
        if save:
            self.metrics['glob_acc'].append(glob_acc)
            self.metrics['glob_loss'].append(glob_loss)
        print("Average Global Accurancy = {:.4f}, Loss = {:.2f}.".format(glob_acc, glob_loss))


def read_user_data(i):
    g = torch.Generator().manual_seed(i)
    train_data = TensorDataset(torch.randn(32, 20, generator=g), torch.randint(0, 4, (32,), generator=g))
    test_data = TensorDataset(torch.randn(12, 20, generator=g), torch.randint(0, 4, (12,), generator=g))
    return "f_{0:05d}".format(i), train_data, test_data


class FedAvg(Server):
    def __init__(self, args, model, seed):
        super().__init__(args, model, seed)
        total_users = 3
        for i in range(total_users):
            id, train_data, test_data = read_user_data(i)
            user = UserAVG(args, id, model, train_data, test_data)
            self.users.append(user)
            self.total_train_samples += user.train_samples
        print("Finished creating FedAvg server.")

    def train(self, args):
        for glob_iter in range(self.num_glob_iters):
            print("\n-------------Round number: ", glob_iter, " -------------\n")
            self.selected_users = self.select_users(glob_iter, self.num_users)
            self.send_parameters(mode=self.mode)
            self.evaluate()
            self.timestamp = time.time()
            for user in self.selected_users:
                user.train(glob_iter, personalized=self.personalized)
            curr_timestamp = time.time()
            train_time = (curr_timestamp - self.timestamp) / len(self.selected_users)
            self.metrics['user_train_time'].append(train_time)
            self.timestamp = time.time()
            self.aggregate_parameters()
            self.metrics['server_agg_time'].append(time.time() - self.timestamp)


torch.manual_seed(0)
np.random.seed(0)
args = Args()
model = Net(), "mlp"
server = FedAvg(args, model, seed=0)
server.train(args)
