# Source: https://github.com/oxwhirl/pymarl/commit/406a8cd
"""Fixed twin (the commit's fix: the unavailable actions are masked in `mac_out.clone().detach()`, the
argmax for double Q taken from that copy). PyMARL, src/learners/q_learner.py `QLearner.train` with `double_q=True` (QMIX): the chosen-action Q-values
are gathered from `mac_out[:, :-1]`, and afterwards the double-Q branch masks unavailable actions in the live
`mac_out` itself, `mac_out[avail_actions == 0] = -9999999`. `gather` saved its input (a view of mac_out), so
`loss.backward()` raises "one of the variables needed for gradient computation has been modified by an
inplace operation: [...], which is output 0 of AsStrided" on newer PyTorch. Fix (the commit): mask a copy,
`mac_out_detach = mac_out.clone().detach()`, and take the argmax actions from it. The SMAC env/episode runner
and replay buffer are replaced by random episode batches (stand-in EpisodeBatch); tiny sizes, 2 updates, CPU.
"""
import copy
from types import SimpleNamespace

import numpy as np
import torch as th
import torch.nn as nn
import torch.nn.functional as F
from torch.optim import RMSprop


# ---- components/episode_buffer.py (stand-in) ----
class EpisodeBatch:
    def __init__(self, data, batch_size, max_seq_length, device="cpu"):
        self.data = data
        self.batch_size = batch_size
        self.max_seq_length = max_seq_length
        self.device = device

    def __getitem__(self, item):
        return self.data[item]


def sample_episode_batch(args, batch_size, T):
    """Stand-in for runner.run() + buffer.sample(): random SMAC-like episodes."""
    n, a = args.n_agents, args.n_actions
    avail = (th.rand(batch_size, T, n, a) > 0.3).long()
    avail[..., 0] = 1  # no-op always available
    actions = th.stack([th.multinomial(avail[b, t].float(), 1) for b in range(batch_size) for t in range(T)])
    actions = actions.view(batch_size, T, n, 1)
    data = {
        "obs": th.randn(batch_size, T, n, args.obs_shape),
        "state": th.randn(batch_size, T, args.state_shape),
        "avail_actions": avail,
        "actions": actions,
        "actions_onehot": F.one_hot(actions.squeeze(-1), a).float(),
        "reward": th.randn(batch_size, T, 1),
        "terminated": th.zeros(batch_size, T, 1, dtype=th.uint8),
        "filled": th.ones(batch_size, T, 1, dtype=th.long),
    }
    data["terminated"][:, T - 2] = 1
    return EpisodeBatch(data, batch_size, T)


# ---- modules/agents/rnn_agent.py ----
class RNNAgent(nn.Module):
    def __init__(self, input_shape, args):
        super(RNNAgent, self).__init__()
        self.args = args
        self.fc1 = nn.Linear(input_shape, args.rnn_hidden_dim)
        self.rnn = nn.GRUCell(args.rnn_hidden_dim, args.rnn_hidden_dim)
        self.fc2 = nn.Linear(args.rnn_hidden_dim, args.n_actions)

    def init_hidden(self):
        return self.fc1.weight.new(1, self.args.rnn_hidden_dim).zero_()

    def forward(self, inputs, hidden_state):
        x = F.relu(self.fc1(inputs))
        h_in = hidden_state.reshape(-1, self.args.rnn_hidden_dim)
        h = self.rnn(x, h_in)
        q = self.fc2(h)
        return q, h


agent_REGISTRY = {"rnn": RNNAgent}


# ---- controllers/basic_controller.py ----
class BasicMAC:
    def __init__(self, scheme, groups, args):
        self.n_agents = args.n_agents
        self.args = args
        input_shape = self._get_input_shape(scheme)
        self._build_agents(input_shape)
        self.agent_output_type = args.agent_output_type
        self.hidden_states = None

    def forward(self, ep_batch, t, test_mode=False):
        agent_inputs = self._build_inputs(ep_batch, t)
        agent_outs, self.hidden_states = self.agent(agent_inputs, self.hidden_states)
        return agent_outs.view(ep_batch.batch_size, self.n_agents, -1)

    def init_hidden(self, batch_size):
        self.hidden_states = self.agent.init_hidden().unsqueeze(0).expand(batch_size, self.n_agents, -1)  # bav

    def parameters(self):
        return self.agent.parameters()

    def load_state(self, other_mac):
        self.agent.load_state_dict(other_mac.agent.state_dict())

    def _build_agents(self, input_shape):
        self.agent = agent_REGISTRY[self.args.agent](input_shape, self.args)

    def _build_inputs(self, batch, t):
        bs = batch.batch_size
        inputs = []
        inputs.append(batch["obs"][:, t])  # b1av
        if self.args.obs_last_action:
            if t == 0:
                inputs.append(th.zeros_like(batch["actions_onehot"][:, t]))
            else:
                inputs.append(batch["actions_onehot"][:, t - 1])
        if self.args.obs_agent_id:
            inputs.append(th.eye(self.n_agents, device=batch.device).unsqueeze(0).expand(bs, -1, -1))
        inputs = th.cat([x.reshape(bs * self.n_agents, -1) for x in inputs], dim=1)
        return inputs

    def _get_input_shape(self, scheme):
        input_shape = scheme["obs"]["vshape"]
        if self.args.obs_last_action:
            input_shape += scheme["actions_onehot"]["vshape"][0]
        if self.args.obs_agent_id:
            input_shape += self.n_agents
        return input_shape


# ---- modules/mixers/qmix.py ----
class QMixer(nn.Module):
    def __init__(self, args):
        super(QMixer, self).__init__()
        self.args = args
        self.n_agents = args.n_agents
        self.state_dim = int(np.prod(args.state_shape))
        self.embed_dim = args.mixing_embed_dim
        self.hyper_w_1 = nn.Linear(self.state_dim, self.embed_dim * self.n_agents)
        self.hyper_w_final = nn.Linear(self.state_dim, self.embed_dim)
        self.hyper_b_1 = nn.Linear(self.state_dim, self.embed_dim)
        self.V = nn.Sequential(nn.Linear(self.state_dim, self.embed_dim), nn.ReLU(), nn.Linear(self.embed_dim, 1))

    def forward(self, agent_qs, states):
        bs = agent_qs.size(0)
        states = states.reshape(-1, self.state_dim)
        agent_qs = agent_qs.view(-1, 1, self.n_agents)
        w1 = th.abs(self.hyper_w_1(states))
        b1 = self.hyper_b_1(states)
        w1 = w1.view(-1, self.n_agents, self.embed_dim)
        b1 = b1.view(-1, 1, self.embed_dim)
        hidden = F.elu(th.bmm(agent_qs, w1) + b1)
        w_final = th.abs(self.hyper_w_final(states))
        w_final = w_final.view(-1, self.embed_dim, 1)
        v = self.V(states).view(-1, 1, 1)
        y = th.bmm(hidden, w_final) + v
        q_tot = y.view(bs, -1, 1)
        return q_tot


class Logger:
    def __init__(self):
        self.stats = {}

    def log_stat(self, key, value, t):
        self.stats.setdefault(key, []).append((t, value))


# ---- learners/q_learner.py ----
class QLearner:
    def __init__(self, mac, scheme, logger, args):
        self.args = args
        self.mac = mac
        self.logger = logger
        self.params = list(mac.parameters())
        self.last_target_update_episode = 0
        self.mixer = None
        if args.mixer is not None:
            if args.mixer == "qmix":
                self.mixer = QMixer(args)
            else:
                raise ValueError("Mixer {} not recognised.".format(args.mixer))
            self.params += list(self.mixer.parameters())
            self.target_mixer = copy.deepcopy(self.mixer)
        self.optimiser = RMSprop(params=self.params, lr=args.lr, alpha=args.optim_alpha, eps=args.optim_eps)
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
            mask_elems = mask.sum().item()
            self.logger.log_stat("td_error_abs", (masked_td_error.abs().sum().item() / mask_elems), t_env)
            self.log_stats_t = t_env

    def _update_targets(self):
        self.target_mac.load_state(self.mac)
        if self.mixer is not None:
            self.target_mixer.load_state_dict(self.mixer.state_dict())


if __name__ == "__main__":
    th.manual_seed(0)
    args = SimpleNamespace(n_agents=3, n_actions=5, obs_shape=6, state_shape=8, rnn_hidden_dim=16,
                           agent="rnn", agent_output_type="q", obs_last_action=True, obs_agent_id=True,
                           mixer="qmix", mixing_embed_dim=8, double_q=True, lr=0.0005, optim_alpha=0.99,
                           optim_eps=0.00001, gamma=0.99, grad_norm_clip=10, target_update_interval=200,
                           learner_log_interval=1)
    scheme = {"obs": {"vshape": args.obs_shape}, "actions_onehot": {"vshape": (args.n_actions,)}}
    mac = BasicMAC(scheme, None, args)
    learner = QLearner(mac, scheme, Logger(), args)
    t_env = 0
    for episode in range(2):
        batch = sample_episode_batch(args, batch_size=4, T=6)
        t_env += batch.max_seq_length
        learner.train(batch, t_env=t_env, episode_num=episode)
    print(learner.logger.stats["loss"])
