# Source: https://github.com/ClownW/Reinforcement-learning-with-PyTorch/issues/3
"""Morvan-style Deep Q Network (5_Deep_Q_Network) ported to PyTorch: learn() appends each step's
loss tensor to self.cost_his, and plot_cost() turns the history into an array for the plot,
np.array(self.cost_his), which calls numpy() on losses that still require grad."""
import numpy as np
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self, n_feature, n_hidden, n_output):
        super().__init__()
        self.el = nn.Linear(n_feature, n_hidden)
        self.q = nn.Linear(n_hidden, n_output)

    def forward(self, x):
        return self.q(torch.relu(self.el(x)))


class DeepQNetwork:
    def __init__(self, n_actions, n_features, learning_rate=0.01, reward_decay=0.9, memory_size=20, batch_size=4):
        self.n_actions, self.n_features = n_actions, n_features
        self.gamma, self.batch_size = reward_decay, batch_size
        self.memory = np.random.randn(memory_size, n_features * 2 + 2).astype(np.float32)
        self.memory[:, n_features] = np.random.randint(0, n_actions, memory_size)
        self.q_eval = Net(n_features, 10, n_actions)
        self.q_target = Net(n_features, 10, n_actions)
        self.optimizer = torch.optim.RMSprop(self.q_eval.parameters(), lr=learning_rate)
        self.loss_func = nn.MSELoss()
        self.cost_his = []

    def learn(self):
        batch_memory = torch.from_numpy(self.memory[np.random.choice(len(self.memory), self.batch_size)])
        q_next = self.q_target(batch_memory[:, -self.n_features:]).detach()
        q_eval = self.q_eval(batch_memory[:, :self.n_features])
        q_target = q_eval.detach().clone()
        batch_index = np.arange(self.batch_size, dtype=np.int32)
        eval_act_index = batch_memory[:, self.n_features].long()
        reward = batch_memory[:, self.n_features + 1]
        q_target[batch_index, eval_act_index] = reward + self.gamma * q_next.max(1)[0]
        loss = self.loss_func(q_eval, q_target)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        self.cost_his.append(loss)

    def plot_cost(self):
        costs = np.array(self.cost_his)  # expect: GG107
        return np.arange(len(costs)), costs  # plt.plot(np.arange(len(self.cost_his)), self.cost_his)


RL = DeepQNetwork(n_actions=4, n_features=2)
for step in range(3):
    RL.learn()
RL.plot_cost()
