# Source: https://github.com/watchernyu/REDQ/pull/2
"""REDQ (watchernyu/REDQ), redq/algos/redq_sac.py before PR #2 "Refactor order of gradient
computations and model updates to make compatible with later versions of Pytorch".

`REDQSACAgent.train` computes the Q ensemble loss and, every `policy_update_delay` updates, the
policy loss `policy_loss = (alpha * log_prob_a_tilda - ave_q).mean()`, where `ave_q` runs the
*online* Q networks on the reparameterised action `a_tilda`. Then it does
`q_loss_all.backward()` and steps every Q optimizer, and only afterwards calls
`policy_loss.backward()`. The Q networks' Linear layers saved their weights (to give the gradient
with respect to `a_tilda`), and Adam's `step()` has just changed those weights in place, so the
policy backward raises "one of the variables needed for gradient computation has been modified by
an inplace operation ... output 0 of TBackward0 ... is at version 2; expected version 1" (torch >=
1.5 checks optimizer updates).

Fix (in the _ok twin): backward the policy loss before any Q optimizer step, then zero the Q
gradients, backward the Q loss and step (PR #2 reordered too, but let the policy gradient leak
into the Q networks' steps).

The environment and logger are small stand-ins (random transitions, a dict logger); the networks
(Mlp, TanhGaussianPolicy), the replay buffer and `train` keep the repository's structure.
"""
import numpy as np
import torch
from torch import Tensor
import torch.nn as nn
import torch.optim as optim
from torch.nn import functional as F
from torch.distributions import Normal

LOG_SIG_MAX = 2
LOG_SIG_MIN = -20
ACTION_BOUND_EPSILON = 1E-6


def weights_init_(m):
    if isinstance(m, nn.Linear):
        torch.nn.init.xavier_uniform_(m.weight, gain=1)
        torch.nn.init.constant_(m.bias, 0)


class ReplayBuffer:
    def __init__(self, obs_dim, act_dim, size):
        self.obs1_buf = np.zeros([size, obs_dim], dtype=np.float32)
        self.obs2_buf = np.zeros([size, obs_dim], dtype=np.float32)
        self.acts_buf = np.zeros([size, act_dim], dtype=np.float32)
        self.rews_buf = np.zeros(size, dtype=np.float32)
        self.done_buf = np.zeros(size, dtype=np.float32)
        self.ptr, self.size, self.max_size = 0, 0, size

    def store(self, obs, act, rew, next_obs, done):
        self.obs1_buf[self.ptr] = obs
        self.obs2_buf[self.ptr] = next_obs
        self.acts_buf[self.ptr] = act
        self.rews_buf[self.ptr] = rew
        self.done_buf[self.ptr] = done
        self.ptr = (self.ptr + 1) % self.max_size
        self.size = min(self.size + 1, self.max_size)

    def sample_batch(self, batch_size=32):
        idxs = np.random.randint(0, self.size, size=batch_size)
        return dict(obs1=self.obs1_buf[idxs], obs2=self.obs2_buf[idxs], acts=self.acts_buf[idxs],
                    rews=self.rews_buf[idxs], done=self.done_buf[idxs], idxs=idxs)


class Mlp(nn.Module):
    def __init__(self, input_size, output_size, hidden_sizes, hidden_activation=F.relu):
        super().__init__()
        self.hidden_activation = hidden_activation
        self.hidden_layers = nn.ModuleList()
        in_size = input_size
        for i, next_size in enumerate(hidden_sizes):
            fc_layer = nn.Linear(in_size, next_size)
            in_size = next_size
            self.hidden_layers.append(fc_layer)
        self.last_fc_layer = nn.Linear(in_size, output_size)
        self.apply(weights_init_)

    def forward(self, input):
        h = input
        for i, fc_layer in enumerate(self.hidden_layers):
            h = fc_layer(h)
            h = self.hidden_activation(h)
        output = self.last_fc_layer(h)
        return output


class TanhGaussianPolicy(Mlp):
    def __init__(self, obs_dim, action_dim, hidden_sizes, hidden_activation=F.relu, action_limit=1.0):
        super().__init__(input_size=obs_dim, output_size=action_dim, hidden_sizes=hidden_sizes,
                         hidden_activation=hidden_activation)
        self.last_fc_log_std = nn.Linear(hidden_sizes[-1], action_dim)
        self.action_limit = action_limit
        self.apply(weights_init_)

    def forward(self, obs, deterministic=False, return_log_prob=True):
        h = obs
        for fc_layer in self.hidden_layers:
            h = self.hidden_activation(fc_layer(h))
        mean = self.last_fc_layer(h)
        log_std = self.last_fc_log_std(h)
        log_std = torch.clamp(log_std, LOG_SIG_MIN, LOG_SIG_MAX)
        std = torch.exp(log_std)
        normal = Normal(mean, std)
        if deterministic:
            pre_tanh_value = mean
            action = torch.tanh(mean)
        else:
            pre_tanh_value = normal.rsample()
            action = torch.tanh(pre_tanh_value)
        if return_log_prob:
            log_prob = normal.log_prob(pre_tanh_value)
            log_prob -= torch.log(1 - action.pow(2) + ACTION_BOUND_EPSILON)
            log_prob = log_prob.sum(1, keepdim=True)
        else:
            log_prob = None
        return action * self.action_limit, mean, log_std, log_prob, std, pre_tanh_value


def soft_update_model1_with_model2(model1, model2, rou):
    for model1_param, model2_param in zip(model1.parameters(), model2.parameters()):
        model1_param.data.copy_(rou * model1_param.data + (1 - rou) * model2_param.data)


class REDQSACAgent(object):
    def __init__(self, obs_dim, act_dim, act_limit, hidden_sizes=(16, 16), replay_size=200,
                 batch_size=8, lr=3e-4, gamma=0.99, polyak=0.995, auto_alpha=True,
                 utd_ratio=4, num_Q=4, num_min=2, policy_update_delay=2, delay_update_steps=10):
        self.policy_net = TanhGaussianPolicy(obs_dim, act_dim, hidden_sizes, action_limit=act_limit)
        self.q_net_list, self.q_target_net_list = [], []
        for q_i in range(num_Q):
            new_q_net = Mlp(obs_dim + act_dim, 1, hidden_sizes)
            self.q_net_list.append(new_q_net)
            new_q_target_net = Mlp(obs_dim + act_dim, 1, hidden_sizes)
            new_q_target_net.load_state_dict(new_q_net.state_dict())
            self.q_target_net_list.append(new_q_target_net)
        self.policy_optimizer = optim.Adam(self.policy_net.parameters(), lr=lr)
        self.q_optimizer_list = []
        for q_i in range(num_Q):
            self.q_optimizer_list.append(optim.Adam(self.q_net_list[q_i].parameters(), lr=lr))
        self.auto_alpha = auto_alpha
        self.target_entropy = -act_dim
        self.log_alpha = torch.zeros(1, requires_grad=True)
        self.alpha_optim = optim.Adam([self.log_alpha], lr=lr)
        self.alpha = self.log_alpha.cpu().exp().item()
        self.replay_buffer = ReplayBuffer(obs_dim=obs_dim, act_dim=act_dim, size=replay_size)
        self.mse_criterion = nn.MSELoss()
        self.gamma, self.polyak, self.batch_size = gamma, polyak, batch_size
        self.num_Q, self.num_min, self.utd_ratio = num_Q, num_min, utd_ratio
        self.policy_update_delay = policy_update_delay
        self.delay_update_steps = delay_update_steps

    def store_data(self, o, a, r, o2, d):
        self.replay_buffer.store(o, a, r, o2, d)

    def sample_data(self, batch_size):
        batch = self.replay_buffer.sample_batch(batch_size)
        obs_tensor = Tensor(batch['obs1'])
        obs_next_tensor = Tensor(batch['obs2'])
        acts_tensor = Tensor(batch['acts'])
        rews_tensor = Tensor(batch['rews']).unsqueeze(1)
        done_tensor = Tensor(batch['done']).unsqueeze(1)
        return obs_tensor, obs_next_tensor, acts_tensor, rews_tensor, done_tensor

    def get_redq_q_target_no_grad(self, obs_next_tensor, rews_tensor, done_tensor):
        sample_idxs = np.random.choice(self.num_Q, self.num_min, replace=False)
        with torch.no_grad():
            a_tilda_next, _, _, log_prob_a_tilda_next, _, _ = self.policy_net.forward(obs_next_tensor)
            q_prediction_next_list = []
            for sample_idx in sample_idxs:
                q_prediction_next = self.q_target_net_list[sample_idx](torch.cat([obs_next_tensor, a_tilda_next], 1))
                q_prediction_next_list.append(q_prediction_next)
            q_prediction_next_cat = torch.cat(q_prediction_next_list, 1)
            min_q, min_indices = torch.min(q_prediction_next_cat, dim=1, keepdim=True)
            next_q_with_log_prob = min_q - self.alpha * log_prob_a_tilda_next
            y_q = rews_tensor + self.gamma * (1 - done_tensor) * next_q_with_log_prob
        return y_q, sample_idxs

    def train(self, logger):
        num_update = 0 if self.replay_buffer.size <= self.delay_update_steps else self.utd_ratio
        for i_update in range(num_update):
            obs_tensor, obs_next_tensor, acts_tensor, rews_tensor, done_tensor = self.sample_data(self.batch_size)

            """Q loss"""
            y_q, sample_idxs = self.get_redq_q_target_no_grad(obs_next_tensor, rews_tensor, done_tensor)
            q_prediction_list = []
            for q_i in range(self.num_Q):
                q_prediction = self.q_net_list[q_i](torch.cat([obs_tensor, acts_tensor], 1))
                q_prediction_list.append(q_prediction)
            q_prediction_cat = torch.cat(q_prediction_list, dim=1)
            y_q = y_q.expand((-1, self.num_Q)) if y_q.shape[1] == 1 else y_q
            q_loss_all = self.mse_criterion(q_prediction_cat, y_q) * self.num_Q

            """policy and alpha loss"""
            if ((i_update + 1) % self.policy_update_delay == 0) or i_update == num_update - 1:
                a_tilda, mean_a_tilda, log_std_a_tilda, log_prob_a_tilda, _, pretanh = self.policy_net.forward(obs_tensor)
                q_a_tilda_list = []
                for sample_idx in range(self.num_Q):
                    q_a_tilda = self.q_net_list[sample_idx](torch.cat([obs_tensor, a_tilda], 1))
                    q_a_tilda_list.append(q_a_tilda)
                q_a_tilda_cat = torch.cat(q_a_tilda_list, 1)
                ave_q = torch.mean(q_a_tilda_cat, dim=1, keepdim=True)
                policy_loss = (self.alpha * log_prob_a_tilda - ave_q).mean()

                if self.auto_alpha:
                    alpha_loss = -(self.log_alpha * (log_prob_a_tilda + self.target_entropy).detach()).mean()
                    self.alpha_optim.zero_grad()
                    alpha_loss.backward()
                    self.alpha_optim.step()
                    self.alpha = self.log_alpha.cpu().exp().item()
                else:
                    alpha_loss = Tensor([0])

            """update networks"""
            for q_i in range(self.num_Q):
                self.q_optimizer_list[q_i].zero_grad()
            q_loss_all.backward()
            for q_i in range(self.num_Q):
                self.q_optimizer_list[q_i].step()

            if ((i_update + 1) % self.policy_update_delay == 0) or i_update == num_update - 1:
                self.policy_optimizer.zero_grad()
                policy_loss.backward()  # expect: GG103
                self.policy_optimizer.step()

            for q_i in range(self.num_Q):
                soft_update_model1_with_model2(self.q_target_net_list[q_i], self.q_net_list[q_i], self.polyak)

            if i_update == num_update - 1:
                logger['LossPi'] = policy_loss.cpu().item()
                logger['LossQ1'] = q_loss_all.cpu().item() / self.num_Q
                logger['LossAlpha'] = alpha_loss.cpu().item()


def redq_sac(total_steps=16, obs_dim=5, act_dim=2, seed=0):
    torch.manual_seed(seed)
    np.random.seed(seed)
    agent = REDQSACAgent(obs_dim, act_dim, act_limit=1.0)
    logger = {}
    o = np.random.randn(obs_dim).astype(np.float32)
    for t in range(total_steps):
        a = np.random.uniform(-1, 1, act_dim).astype(np.float32)
        o2 = np.random.randn(obs_dim).astype(np.float32)
        r = float(np.random.randn())
        d = float(t % 8 == 7)
        agent.store_data(o, a, r, o2, d)
        o = o2
        agent.train(logger)
    return logger


if __name__ == '__main__':
    print(redq_sac())
