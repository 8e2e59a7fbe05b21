# Source: https://github.com/TianhongDai/reinforcement-learning-algorithms/issues/8
"""TianhongDai's SAC agent (rl_algorithms/sac/sac_agent.py, _update_newtork) as the reporter ran it
on a recent torch: actor_loss = (alpha * log_prob - min(qf1(obs, a~), qf2(obs, a~))).mean() is
built first, then qf1_optim.step() and qf2_optim.step() change the Q networks' weights in place,
and actor_loss.backward() walks back through qf1/qf2, whose saved weights are now stale: torch
raises the in-place error. flatten_mlp, tanh_gaussian_actor, tanh_normal and get_action_info
follow models.py and utils.py; gym and the replay buffer are small stand-ins. The thread's fix
(q_actions_.detach()) silences the error but cuts the actor's gradient through Q (a later
comment finds the actor no longer learns); the right fix updates the actor before the Q steps."""
import copy

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Distribution
from torch.distributions.normal import Normal


class flatten_mlp(nn.Module):
    def __init__(self, input_dims, hidden_size, action_dims=None):
        super(flatten_mlp, self).__init__()
        self.fc1 = nn.Linear(input_dims, hidden_size) if action_dims is None else nn.Linear(input_dims + action_dims, hidden_size)
        self.fc2 = nn.Linear(hidden_size, hidden_size)
        self.q_value = nn.Linear(hidden_size, 1)

    def forward(self, obs, action=None):
        inputs = torch.cat([obs, action], dim=1) if action is not None else obs
        x = F.relu(self.fc1(inputs))
        x = F.relu(self.fc2(x))
        return self.q_value(x)


class tanh_gaussian_actor(nn.Module):
    def __init__(self, input_dims, action_dims, hidden_size, log_std_min, log_std_max):
        super(tanh_gaussian_actor, self).__init__()
        self.fc1 = nn.Linear(input_dims, hidden_size)
        self.fc2 = nn.Linear(hidden_size, hidden_size)
        self.mean = nn.Linear(hidden_size, action_dims)
        self.log_std = nn.Linear(hidden_size, action_dims)
        self.log_std_min = log_std_min
        self.log_std_max = log_std_max

    def forward(self, obs):
        x = F.relu(self.fc1(obs))
        x = F.relu(self.fc2(x))
        mean = self.mean(x)
        log_std = torch.clamp(self.log_std(x), min=self.log_std_min, max=self.log_std_max)
        return (mean, torch.exp(log_std))


class tanh_normal(Distribution):
    def __init__(self, normal_mean, normal_std, epsilon=1e-6, cuda=False):
        self.normal_mean = normal_mean
        self.normal_std = normal_std
        self.cuda = cuda
        self.normal = Normal(normal_mean, normal_std)
        self.epsilon = epsilon

    def log_prob(self, value, pre_tanh_value=None):
        if pre_tanh_value is None:
            pre_tanh_value = torch.log((1 + value) / (1 - value)) / 2
        return self.normal.log_prob(pre_tanh_value) - torch.log(1 - value * value + self.epsilon)

    def sample(self, return_pretanh_value=False):
        z = self.normal.sample().detach()
        return (torch.tanh(z), z) if return_pretanh_value else torch.tanh(z)

    def rsample(self, return_pretanh_value=False):
        sample_mean = torch.zeros(self.normal_mean.size(), dtype=torch.float32)
        sample_std = torch.ones(self.normal_std.size(), dtype=torch.float32)
        z = (self.normal_mean + self.normal_std * Normal(sample_mean, sample_std).sample())
        z.requires_grad_()
        return (torch.tanh(z), z) if return_pretanh_value else torch.tanh(z)


class get_action_info:
    def __init__(self, pis, cuda=False):
        self.mean, self.std = pis
        self.dist = tanh_normal(normal_mean=self.mean, normal_std=self.std, cuda=cuda)

    def select_actions(self, exploration=True, reparameterize=True):
        if exploration:
            if reparameterize:
                actions, pretanh = self.dist.rsample(return_pretanh_value=True)
                return actions, pretanh
            actions = self.dist.sample()
        else:
            actions = torch.tanh(self.mean)
        return actions

    def get_log_prob(self, actions, pre_tanh_value):
        log_prob = self.dist.log_prob(actions, pre_tanh_value=pre_tanh_value)
        return log_prob.sum(dim=1, keepdim=True)


class Box:
    def __init__(self, shape):
        self.shape = shape
        self.high = np.ones(shape, dtype=np.float32)


class PendulumStandIn:
    """Stand-in for a gym continuous-control env."""

    def __init__(self):
        self.observation_space = Box((3,))
        self.action_space = Box((1,))

    def reset(self):
        return np.random.randn(3).astype(np.float32)

    def step(self, action):
        return np.random.randn(3).astype(np.float32), float(-np.abs(action).sum()), bool(np.random.rand() < 0.1), {}


class replay_buffer:
    def __init__(self, memory_size):
        self.storge = []
        self.memory_size = memory_size

    def add(self, obs, action, reward, obs_, done):
        self.storge.append((obs, action, reward, obs_, done))
        self.storge = self.storge[-self.memory_size:]

    def sample(self, batch_size):
        idx = np.random.randint(0, len(self.storge), batch_size)
        obses, actions, rewards, obses_, dones = zip(*[self.storge[i] for i in idx])
        return np.array(obses), np.array(actions), np.array(rewards), np.array(obses_), np.array(dones)


class Args:
    hidden_size = 32
    log_std_min = -20
    log_std_max = 2
    q_lr = 3e-4
    p_lr = 3e-4
    buffer_size = 1000
    batch_size = 16
    gamma = 0.99
    reward_scale = 1
    tau = 5e-3
    cuda = False


class sac_agent:
    def __init__(self, env, args):
        self.args = args
        self.env = env
        self.qf1 = flatten_mlp(env.observation_space.shape[0], args.hidden_size, env.action_space.shape[0])
        self.qf2 = flatten_mlp(env.observation_space.shape[0], args.hidden_size, env.action_space.shape[0])
        self.target_qf1 = copy.deepcopy(self.qf1)
        self.target_qf2 = copy.deepcopy(self.qf2)
        self.actor_net = tanh_gaussian_actor(env.observation_space.shape[0], env.action_space.shape[0],
                                             args.hidden_size, args.log_std_min, args.log_std_max)
        self.qf1_optim = torch.optim.Adam(self.qf1.parameters(), lr=args.q_lr)
        self.qf2_optim = torch.optim.Adam(self.qf2.parameters(), lr=args.q_lr)
        self.actor_optim = torch.optim.Adam(self.actor_net.parameters(), lr=args.p_lr)
        self.target_entropy = -np.prod(env.action_space.shape).item()
        self.log_alpha = torch.zeros(1, requires_grad=True)
        self.alpha_optim = torch.optim.Adam([self.log_alpha], lr=args.p_lr)
        self.buffer = replay_buffer(args.buffer_size)
        self.action_max = env.action_space.high[0]

    def _initial_exploration(self, steps=32):
        obs = self.env.reset()
        for _ in range(steps):
            with torch.no_grad():
                pi = self.actor_net(torch.tensor(obs).unsqueeze(0))
                action = get_action_info(pi).select_actions(reparameterize=False).numpy()[0]
            obs_, reward, done, _ = self.env.step(self.action_max * action)
            self.buffer.add(obs, action, reward, obs_, float(done))
            obs = self.env.reset() if done else obs_

    def _update_newtork(self):
        obses, actions, rewards, obses_, dones = self.buffer.sample(self.args.batch_size)
        obses = torch.tensor(obses, dtype=torch.float32)
        actions = torch.tensor(actions, dtype=torch.float32)
        rewards = torch.tensor(rewards, dtype=torch.float32).unsqueeze(-1)
        obses_ = torch.tensor(obses_, dtype=torch.float32)
        inverse_dones = torch.tensor(1 - dones, dtype=torch.float32).unsqueeze(-1)
        # start to update the actor network
        pis = self.actor_net(obses)
        actions_info = get_action_info(pis, cuda=self.args.cuda)
        actions_, pre_tanh_value = actions_info.select_actions(reparameterize=True)
        log_prob = actions_info.get_log_prob(actions_, pre_tanh_value)
        alpha_loss = -(self.log_alpha * (log_prob + self.target_entropy).detach()).mean()
        self.alpha_optim.zero_grad()
        alpha_loss.backward()
        self.alpha_optim.step()
        alpha = self.log_alpha.exp()
        # get the q_value for new actions
        q_actions_ = torch.min(self.qf1(obses, actions_), self.qf2(obses, actions_))
        actor_loss = (alpha * log_prob - q_actions_).mean()
        # q value function loss
        q1_value = self.qf1(obses, actions)
        q2_value = self.qf2(obses, actions)
        with torch.no_grad():
            pis_next = self.actor_net(obses_)
            actions_info_next = get_action_info(pis_next, cuda=self.args.cuda)
            actions_next_, pre_tanh_value_next = actions_info_next.select_actions(reparameterize=True)
            log_prob_next = actions_info_next.get_log_prob(actions_next_, pre_tanh_value_next)
            target_q_value_next = torch.min(self.target_qf1(obses_, actions_next_),
                                            self.target_qf2(obses_, actions_next_)) - alpha * log_prob_next
            target_q_value = self.args.reward_scale * rewards + inverse_dones * self.args.gamma * target_q_value_next
        qf1_loss = (q1_value - target_q_value).pow(2).mean()
        qf2_loss = (q2_value - target_q_value).pow(2).mean()
        # qf1
        self.qf1_optim.zero_grad()
        qf1_loss.backward()
        self.qf1_optim.step()
        # qf2
        self.qf2_optim.zero_grad()
        qf2_loss.backward()
        self.qf2_optim.step()
        # policy loss
        self.actor_optim.zero_grad()
        actor_loss.backward()  # expect: GG103
        self.actor_optim.step()
        return qf1_loss.item(), qf2_loss.item(), actor_loss.item(), alpha.item(), alpha_loss.item()

    def _update_target_network(self, target, source):
        for target_param, param in zip(target.parameters(), source.parameters()):
            target_param.data.copy_(self.args.tau * param.data + (1 - self.args.tau) * target_param.data)

    def learn(self, updates=2):
        self._initial_exploration()
        for _ in range(updates):
            self._update_newtork()
            self._update_target_network(self.target_qf1, self.qf1)
            self._update_target_network(self.target_qf2, self.qf2)


if __name__ == "__main__":
    agent = sac_agent(PendulumStandIn(), Args())
    agent.learn()
