# Source: https://github.com/reinforcement-learning-kr/lets-do-irl/issues/9
"""lets-do-irl's VAIL (mujoco/vail): train_vdb() fits the variational discriminator bottleneck,
then the PPO update (train_actor_critic in the reporter's traceback) builds one loss from the actor
and critic terms, backwards it with retain_graph=True, steps the critic, and backwards the same
loss again for the actor. The second backward needs the critic's fc3 weight (AddmmBackward) that
critic_optim.step() changed in place. train_vdb's own retain_graph=True keeps graphs nothing walks
again. Actor, Critic, VDB and the utils follow the repository; the MuJoCo rollout and the expert
demonstrations are random arrays, the reward comes from the VDB as in main.py."""
import math
from types import SimpleNamespace

import numpy as np
import torch
import torch.nn as nn


class Actor(nn.Module):
    def __init__(self, num_inputs, num_outputs, args):
        super(Actor, self).__init__()
        self.fc1 = nn.Linear(num_inputs, args.hidden_size)
        self.fc2 = nn.Linear(args.hidden_size, args.hidden_size)
        self.fc3 = nn.Linear(args.hidden_size, num_outputs)
        self.fc3.weight.data.mul_(0.1)
        self.fc3.bias.data.mul_(0.0)

    def forward(self, x):
        x = torch.tanh(self.fc1(x))
        x = torch.tanh(self.fc2(x))
        mu = self.fc3(x)
        logstd = torch.zeros_like(mu)
        std = torch.exp(logstd)
        return mu, std


class Critic(nn.Module):
    def __init__(self, num_inputs, args):
        super(Critic, self).__init__()
        self.fc1 = nn.Linear(num_inputs, args.hidden_size)
        self.fc2 = nn.Linear(args.hidden_size, args.hidden_size)
        self.fc3 = nn.Linear(args.hidden_size, 1)
        self.fc3.weight.data.mul_(0.1)
        self.fc3.bias.data.mul_(0.0)

    def forward(self, x):
        x = torch.tanh(self.fc1(x))
        x = torch.tanh(self.fc2(x))
        v = self.fc3(x)
        return v


class VDB(nn.Module):
    def __init__(self, num_inputs, args):
        super(VDB, self).__init__()
        self.fc1 = nn.Linear(num_inputs, args.hidden_size)
        self.fc2 = nn.Linear(args.hidden_size, args.z_size)
        self.fc3 = nn.Linear(args.hidden_size, args.z_size)
        self.fc4 = nn.Linear(args.z_size, args.hidden_size)
        self.fc5 = nn.Linear(args.hidden_size, 1)
        self.fc5.weight.data.mul_(0.1)
        self.fc5.bias.data.mul_(0.0)

    def encoder(self, x):
        h = torch.tanh(self.fc1(x))
        return self.fc2(h), self.fc3(h)

    def reparameterize(self, mu, logvar):
        std = torch.exp(logvar / 2)
        eps = torch.randn_like(std)
        return mu + std * eps

    def discriminator(self, z):
        h = torch.tanh(self.fc4(z))
        return torch.sigmoid(self.fc5(h))

    def forward(self, x):
        mu, logvar = self.encoder(x)
        z = self.reparameterize(mu, logvar)
        prob = self.discriminator(z)
        return prob, mu, logvar


def get_action(mu, std):
    action = torch.normal(mu, std)
    return action.data.numpy()


def get_entropy(mu, std):
    dist = torch.distributions.Normal(mu, std)
    return dist.entropy().mean()


def log_prob_density(x, mu, std):
    log_density = -(x - mu).pow(2) / (2 * std.pow(2)) - 0.5 * math.log(2 * math.pi)
    return log_density.sum(1, keepdim=True)


def get_reward(vdb, state, action):
    state = torch.Tensor(state)
    action = torch.Tensor(action)
    state_action = torch.cat([state, action])
    with torch.no_grad():
        return -math.log(vdb(state_action)[0].item())


def kl_divergence(mu, logvar):
    kl_div = 0.5 * torch.sum(mu.pow(2) + logvar.exp() - logvar - 1, dim=1)
    return kl_div


def train_vdb(vdb, memory, vdb_optim, demonstrations, beta, args):
    memory = np.array(memory, dtype=object)
    states = np.vstack(memory[:, 0])
    actions = np.vstack(memory[:, 1])

    states = torch.Tensor(states)
    actions = torch.Tensor(actions)

    criterion = torch.nn.BCELoss()

    for _ in range(args.vdb_update_num):
        learner, l_mu, l_logvar = vdb(torch.cat([states, actions], dim=1))
        expert, e_mu, e_logvar = vdb(torch.Tensor(demonstrations))

        l_kld = kl_divergence(l_mu, l_logvar)
        l_kld = l_kld.mean()

        e_kld = kl_divergence(e_mu, e_logvar)
        e_kld = e_kld.mean()

        kld = 0.5 * (l_kld + e_kld)
        bottleneck_loss = kld - args.i_c

        beta = max(0, beta + args.alpha_beta * bottleneck_loss)

        vdb_loss = criterion(learner, torch.ones((states.shape[0], 1))) + \
            criterion(expert, torch.zeros((demonstrations.shape[0], 1))) + \
            beta * bottleneck_loss

        vdb_optim.zero_grad()
        vdb_loss.backward(retain_graph=True)  # expect: GG203
        vdb_optim.step()


def train_actor_critic(actor, critic, memory, actor_optim, critic_optim, args):
    memory = np.array(memory, dtype=object)
    states = np.vstack(memory[:, 0])
    actions = np.vstack(memory[:, 1])
    rewards = list(memory[:, 2])
    masks = list(memory[:, 3])

    old_values = critic(torch.Tensor(states))
    returns, advants = get_gae(rewards, masks, old_values, args)

    mu, std = actor(torch.Tensor(states))
    old_policy = log_prob_density(torch.Tensor(actions), mu, std)

    criterion = torch.nn.MSELoss()
    n = len(states)
    arr = np.arange(n)

    for _ in range(args.ppo_update_num):
        np.random.shuffle(arr)

        for i in range(n // args.batch_size):
            batch_index = arr[args.batch_size * i: args.batch_size * (i + 1)]
            batch_index = torch.LongTensor(batch_index)

            inputs = torch.Tensor(states)[batch_index]
            actions_samples = torch.Tensor(actions)[batch_index]
            returns_samples = returns.unsqueeze(1)[batch_index]
            advants_samples = advants.unsqueeze(1)[batch_index]
            oldvalue_samples = old_values[batch_index].detach()

            values = critic(inputs)
            clipped_values = oldvalue_samples + \
                torch.clamp(values - oldvalue_samples, -args.clip_param, args.clip_param)
            critic_loss1 = criterion(clipped_values, returns_samples)
            critic_loss2 = criterion(values, returns_samples)
            critic_loss = torch.max(critic_loss1, critic_loss2).mean()

            loss, ratio, entropy = surrogate_loss(actor, advants_samples, inputs,
                                                  old_policy.detach(), actions_samples,
                                                  batch_index)
            clipped_ratio = torch.clamp(ratio, 1.0 - args.clip_param, 1.0 + args.clip_param)
            clipped_loss = clipped_ratio * advants_samples
            actor_loss = -torch.min(loss, clipped_loss).mean()

            loss = actor_loss + 0.5 * critic_loss - 0.001 * entropy

            critic_optim.zero_grad()
            loss.backward(retain_graph=True)
            critic_optim.step()

            actor_optim.zero_grad()
            loss.backward()  # expect: GG103
            actor_optim.step()


def get_gae(rewards, masks, values, args):
    rewards = torch.Tensor(rewards)
    masks = torch.Tensor(masks)
    returns = torch.zeros_like(rewards)
    advants = torch.zeros_like(rewards)

    running_returns = 0
    previous_value = 0
    running_advants = 0

    for t in reversed(range(0, len(rewards))):
        running_returns = rewards[t] + (args.gamma * running_returns * masks[t])
        returns[t] = running_returns

        running_delta = rewards[t] + (args.gamma * previous_value * masks[t]) - values.data[t]
        previous_value = values.data[t]

        running_advants = running_delta + (args.gamma * args.lamda * running_advants * masks[t])
        advants[t] = running_advants

    advants = (advants - advants.mean()) / advants.std()
    return returns, advants


def surrogate_loss(actor, advants, states, old_policy, actions, batch_index):
    mu, std = actor(states)
    new_policy = log_prob_density(actions, mu, std)
    old_policy = old_policy[batch_index]

    ratio = torch.exp(new_policy - old_policy)
    surrogate_loss = ratio * advants
    entropy = get_entropy(mu, std)

    return surrogate_loss, ratio, entropy


def main():
    args = SimpleNamespace(hidden_size=16, z_size=4, gamma=0.99, lamda=0.98, learning_rate=3e-4,
                           l2_rate=1e-3, clip_param=0.2, vdb_update_num=2, ppo_update_num=2,
                           total_sample_size=32, batch_size=16, i_c=0.5, alpha_beta=1e-4, max_iter_num=2)
    num_inputs, num_actions = 5, 2
    demonstrations = np.random.randn(32, num_inputs + num_actions).astype(np.float32)

    actor = Actor(num_inputs, num_actions, args)
    critic = Critic(num_inputs, args)
    vdb = VDB(num_inputs + num_actions, args)

    actor_optim = torch.optim.Adam(actor.parameters(), lr=args.learning_rate)
    critic_optim = torch.optim.Adam(critic.parameters(), lr=args.learning_rate, weight_decay=args.l2_rate)
    vdb_optim = torch.optim.Adam(vdb.parameters(), lr=args.learning_rate)

    beta = 0
    for iter in range(args.max_iter_num):
        actor.eval(), critic.eval()
        memory = []
        state = np.random.randn(num_inputs)
        for step in range(args.total_sample_size):
            mu, std = actor(torch.Tensor(state).unsqueeze(0))
            action = get_action(mu, std)[0]
            next_state = np.random.randn(num_inputs)
            done = step % 8 == 7
            irl_reward = get_reward(vdb, state, action)
            mask = 0 if done else 1
            memory.append([state, action, irl_reward, mask])
            state = next_state

        actor.train(), critic.train(), vdb.train()
        train_vdb(vdb, memory, vdb_optim, demonstrations, beta, args)
        train_actor_critic(actor, critic, memory, actor_optim, critic_optim, args)
        print(iter, 'done')


if __name__ == "__main__":
    main()
