# Source: https://github.com/oxwhirl/pymarl/commit/406a8cd
"""PyMARL's `QLearner.train` with `double_q`: the agents' Q-values `mac_out` are stacked over time and
`th.gather(mac_out[:, :-1], ...)` picks the taken actions (gather saves the view of `mac_out`); then, to
find the argmax actions for the target, the unavailable actions were masked in place on `mac_out` itself.
Fixed as the commit does: the mask is written into a detached copy, `mac_out_detach = mac_out.clone().detach()`,
whose argmax picks the target actions, and `mac_out` keeps the values gather saved. The EpisodeBatch, MAC (a feed-forward agent in
place of the GRU one), VDN mixer and logger are small stand-ins written here; random episodes, CPU.
"""
import copy
from types import SimpleNamespace

import torch as th
import torch.nn as nn
from torch.optim import RMSprop


class EpisodeBatch:
    """Stand-in for components.episode_buffer.EpisodeBatch: a dict of [batch, time, ...] tensors."""

    def __init__(self, data, batch_size, max_seq_length):
        self.data = data
        self.batch_size = batch_size
        self.max_seq_length = max_seq_length

    def __getitem__(self, key):
        return self.data[key]


class FFAgent(nn.Module):
    """A feed-forward agent with the RNN agent's interface (the hidden state is passed through)."""

    def __init__(self, input_shape, args):
        super().__init__()
        self.hidden_dim = args.rnn_hidden_dim
        self.fc1 = nn.Linear(input_shape, args.rnn_hidden_dim)
        self.fc2 = nn.Linear(args.rnn_hidden_dim, args.n_actions)

    def init_hidden(self):
        return self.fc1.weight.new(1, self.hidden_dim).zero_()

    def forward(self, inputs, hidden_state):
        x = th.relu(self.fc1(inputs))
        return self.fc2(x), hidden_state


class BasicMAC:
    def __init__(self, scheme, args):
        self.n_agents = args.n_agents
        self.agent = FFAgent(scheme["obs"], args)
        self.hidden_states = None

    def forward(self, ep_batch, t):
        agent_inputs = ep_batch["obs"][:, t].reshape(ep_batch.batch_size * self.n_agents, -1)
        agent_outs, self.hidden_states = self.agent(agent_inputs, self.hidden_states)
        return agent_outs.view(ep_batch.batch_size, self.n_agents, -1)

    def init_hidden(self, batch_size):
        self.hidden_states = self.agent.init_hidden().unsqueeze(0).expand(batch_size, self.n_agents, -1)

    def parameters(self):
        return self.agent.parameters()

    def load_state(self, other_mac):
        self.agent.load_state_dict(other_mac.agent.state_dict())


class VDNMixer(nn.Module):
    def forward(self, agent_qs, batch):
        return th.sum(agent_qs, dim=2, keepdim=True)


class Logger:
    def __init__(self):
        self.console_logger = SimpleNamespace(info=print)

    def log_stat(self, key, value, t):
        print(key, round(float(value), 4), t)


class QLearner:
    def __init__(self, mac, scheme, logger, args):
        self.args = args
        self.mac = mac
        self.logger = logger

        self.params = list(mac.parameters())

        self.last_target_update_episode = 0

        self.mixer = None
        if args.mixer is not None:
            if args.mixer == "vdn":
                self.mixer = VDNMixer()
            else:
                raise ValueError("Mixer {} not recognised.".format(args.mixer))
            self.params += list(self.mixer.parameters())
            self.target_mixer = copy.deepcopy(self.mixer)

        self.optimiser = RMSprop(params=self.params, lr=args.lr, alpha=args.optim_alpha, eps=args.optim_eps)

        # a little wasteful to deepcopy (e.g. duplicates action selector), but should work for any MAC
        self.target_mac = copy.deepcopy(mac)

        self.log_stats_t = -self.args.learner_log_interval - 1

    def train(self, batch: EpisodeBatch, t_env: int, episode_num: int):
        # Get the relevant quantities
        rewards = batch["reward"][:, :-1]
        actions = batch["actions"][:, :-1]
        terminated = batch["terminated"][:, :-1].float()
        mask = batch["filled"][:, :-1].float()
        mask[:, 1:] = mask[:, 1:] * (1 - terminated[:, :-1])
        avail_actions = batch["avail_actions"]

        # Calculate estimated Q-Values
        mac_out = []
        self.mac.init_hidden(batch.batch_size)
        for t in range(batch.max_seq_length):
            agent_outs = self.mac.forward(batch, t=t)
            mac_out.append(agent_outs)
        mac_out = th.stack(mac_out, dim=1)  # Concat over time

        # Pick the Q-Values for the actions taken by each agent
        chosen_action_qvals = th.gather(mac_out[:, :-1], dim=3, index=actions).squeeze(3)  # Remove the last dim

        # Calculate the Q-Values necessary for the target
        target_mac_out = []
        self.target_mac.init_hidden(batch.batch_size)
        for t in range(batch.max_seq_length):
            target_agent_outs = self.target_mac.forward(batch, t=t)
            target_mac_out.append(target_agent_outs)

        # We don't need the first timesteps Q-Value estimate for calculating targets
        target_mac_out = th.stack(target_mac_out[1:], dim=1)  # Concat across time

        # Mask out unavailable actions
        target_mac_out[avail_actions[:, 1:] == 0] = -9999999

        # Max over target Q-Values
        if self.args.double_q:
            # Get actions that maximise live Q (for double q-learning)
            mac_out_detach = mac_out.clone().detach()
            mac_out_detach[avail_actions == 0] = -9999999
            cur_max_actions = mac_out_detach[:, 1:].max(dim=3, keepdim=True)[1]
            target_max_qvals = th.gather(target_mac_out, 3, cur_max_actions).squeeze(3)
        else:
            target_max_qvals = target_mac_out.max(dim=3)[0]

        # Mix
        if self.mixer is not None:
            chosen_action_qvals = self.mixer(chosen_action_qvals, batch["state"][:, :-1])
            target_max_qvals = self.target_mixer(target_max_qvals, batch["state"][:, 1:])

        # Calculate 1-step Q-Learning targets
        targets = rewards + self.args.gamma * (1 - terminated) * target_max_qvals

        # Td-error
        td_error = (chosen_action_qvals - targets.detach())

        mask = mask.expand_as(td_error)

        # 0-out the targets that came from padded data
        masked_td_error = td_error * mask

        # Normal L2 loss, take mean over actual data
        loss = (masked_td_error ** 2).sum() / mask.sum()

        # Optimise
        self.optimiser.zero_grad()
        loss.backward()
        grad_norm = th.nn.utils.clip_grad_norm_(self.params, self.args.grad_norm_clip)
        self.optimiser.step()

        if (episode_num - self.last_target_update_episode) / self.args.target_update_interval >= 1.0:
            self._update_targets()
            self.last_target_update_episode = episode_num

        if t_env - self.log_stats_t >= self.args.learner_log_interval:
            self.logger.log_stat("loss", loss.item(), t_env)
            self.logger.log_stat("grad_norm", grad_norm, t_env)
            self.log_stats_t = t_env

    def _update_targets(self):
        self.target_mac.load_state(self.mac)
        if self.mixer is not None:
            self.target_mixer.load_state_dict(self.mixer.state_dict())
        self.logger.console_logger.info("Updated target network")


def random_batch(args, batch_size=2, T=5):
    avail = th.ones(batch_size, T, args.n_agents, args.n_actions, dtype=th.long)
    avail[..., -1] = (th.rand(batch_size, T, args.n_agents) > 0.5).long()
    actions = th.randint(0, args.n_actions - 1, (batch_size, T, args.n_agents, 1))
    data = {
        "obs": th.randn(batch_size, T, args.n_agents, args.obs_dim),
        "state": th.randn(batch_size, T, args.n_agents * args.obs_dim),
        "reward": th.randn(batch_size, T, 1),
        "actions": actions,
        "terminated": th.zeros(batch_size, T, 1, dtype=th.long),
        "filled": th.ones(batch_size, T, 1, dtype=th.long),
        "avail_actions": avail,
    }
    return EpisodeBatch(data, batch_size, T)


args = SimpleNamespace(n_agents=3, n_actions=4, obs_dim=6, rnn_hidden_dim=16, mixer="vdn", double_q=True,
                       lr=5e-4, optim_alpha=0.99, optim_eps=1e-5, gamma=0.99, grad_norm_clip=10,
                       target_update_interval=2, learner_log_interval=0)
scheme = {"obs": args.obs_dim}
mac = BasicMAC(scheme, args)
learner = QLearner(mac, scheme, Logger(), args)
for episode in range(3):
    learner.train(random_batch(args), t_env=episode * 10, episode_num=episode)
