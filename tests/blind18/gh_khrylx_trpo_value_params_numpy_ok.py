# Source: https://github.com/Khrylx/PyTorch-RL/commit/9673a7f
"""Fixed twin (the commit's line: `get_flat_params_from(value_net).detach().cpu().numpy()`). Khrylx/PyTorch-RL,
core/trpo.py `trpo_step` as ported to PyTorch 0.4 ("fix trpo"): the critic is fitted with
`scipy.optimize.fmin_l_bfgs_b(get_value_loss, get_flat_params_from(value_net).cpu().numpy(), maxiter=25)`,
and `get_flat_params_from` concatenates `param.view(-1)` of the value net's parameters, a tensor that
requires grad; on CPU `.cpu()` is the same tensor and `.numpy()` raises "Can't call numpy() on Tensor that
requires grad". Fix (the commit): `.detach().cpu().numpy()`. The commit also moved `set_flat_params_to` to
`param.data.copy_`, kept in both twins. scipy's L-BFGS-B is a small gradient-descent stand-in with its
signature, gym's env, ZFilter and the threaded Agent are stand-ins; tiny sizes, 2 iterations, CPU.
"""
import math
from collections import namedtuple

import numpy as np
import torch
import torch.nn as nn

dtype = torch.float64
torch.set_default_dtype(dtype)
Tensor = torch.Tensor
ones = torch.ones
zeros = torch.zeros


# ---- utils/torch.py ----
def to_device(device, *args):
    return [x.to(device) for x in args]


def get_flat_params_from(model):
    params = []
    for param in model.parameters():
        params.append(param.view(-1))
    flat_params = torch.cat(params)
    return flat_params


def set_flat_params_to(model, flat_params):
    prev_ind = 0
    for param in model.parameters():
        flat_size = int(np.prod(list(param.size())))
        param.data.copy_(flat_params[prev_ind:prev_ind + flat_size].view(param.size()))
        prev_ind += flat_size


def get_flat_grad_from(inputs, grad_grad=False):
    grads = []
    for param in inputs:
        if grad_grad:
            grads.append(param.grad.grad.view(-1))
        else:
            if param.grad is None:
                grads.append(zeros(param.view(-1).shape))
            else:
                grads.append(param.grad.view(-1))
    flat_grad = torch.cat(grads)
    return flat_grad


# ---- utils/math.py ----
def normal_log_density(x, mean, log_std, std):
    var = std.pow(2)
    log_density = -(x - mean).pow(2) / (2 * var) - 0.5 * math.log(2 * math.pi) - log_std
    return log_density.sum(1, keepdim=True)


# ---- scipy.optimize stand-in ----
class optimize_standin:
    @staticmethod
    def fmin_l_bfgs_b(func, x0, maxiter=15000, lr=1e-2):
        """Stand-in for scipy.optimize.fmin_l_bfgs_b: plain gradient descent on (f, g) = func(x)."""
        x = np.asarray(x0, dtype=np.float64).copy()
        f = None
        for _ in range(maxiter):
            f, g = func(x)
            x = x - lr * np.asarray(g, dtype=np.float64)
        return x, f, {'nit': maxiter}


# ---- models/mlp_policy.py, mlp_critic.py ----
class Policy(nn.Module):
    def __init__(self, state_dim, action_dim, hidden_size=(16, 16), activation='tanh', log_std=0):
        super().__init__()
        self.is_disc_action = False
        self.activation = torch.tanh
        self.affine_layers = nn.ModuleList()
        last_dim = state_dim
        for nh in hidden_size:
            self.affine_layers.append(nn.Linear(last_dim, nh))
            last_dim = nh
        self.action_mean = nn.Linear(last_dim, action_dim)
        self.action_mean.weight.data.mul_(0.1)
        self.action_mean.bias.data.mul_(0.0)
        self.action_log_std = nn.Parameter(torch.ones(1, action_dim) * log_std)

    def forward(self, x):
        for affine in self.affine_layers:
            x = self.activation(affine(x))
        action_mean = self.action_mean(x)
        action_log_std = self.action_log_std.expand_as(action_mean)
        action_std = torch.exp(action_log_std)
        return action_mean, action_log_std, action_std

    def select_action(self, x):
        action_mean, _, action_std = self.forward(x)
        action = torch.normal(action_mean, action_std)
        return action

    def get_kl(self, x):
        mean1, log_std1, std1 = self.forward(x)
        mean0 = mean1.detach()
        log_std0 = log_std1.detach()
        std0 = std1.detach()
        kl = log_std1 - log_std0 + (std0.pow(2) + (mean0 - mean1).pow(2)) / (2.0 * std1.pow(2)) - 0.5
        return kl.sum(1, keepdim=True)

    def get_log_prob(self, x, actions):
        action_mean, action_log_std, action_std = self.forward(x)
        return normal_log_density(actions, action_mean, action_log_std, action_std)


class Value(nn.Module):
    def __init__(self, state_dim, hidden_size=(16, 16), activation='tanh'):
        super().__init__()
        self.activation = torch.tanh
        self.affine_layers = nn.ModuleList()
        last_dim = state_dim
        for nh in hidden_size:
            self.affine_layers.append(nn.Linear(last_dim, nh))
            last_dim = nh
        self.value_head = nn.Linear(last_dim, 1)
        self.value_head.weight.data.mul_(0.1)
        self.value_head.bias.data.mul_(0.0)

    def forward(self, x):
        for affine in self.affine_layers:
            x = self.activation(affine(x))
        value = self.value_head(x)
        return value


# ---- core/common.py ----
def estimate_advantages(rewards, masks, values, gamma, tau, device):
    rewards, masks, values = to_device(torch.device('cpu'), rewards, masks, values)
    tensor_type = type(rewards)
    deltas = tensor_type(rewards.size(0), 1)
    advantages = tensor_type(rewards.size(0), 1)
    prev_value = 0
    prev_advantage = 0
    for i in reversed(range(rewards.size(0))):
        deltas[i] = rewards[i] + gamma * prev_value * masks[i] - values[i]
        advantages[i] = deltas[i] + gamma * tau * prev_advantage * masks[i]
        prev_value = values[i, 0]
        prev_advantage = advantages[i, 0]
    returns = values + advantages
    advantages = (advantages - advantages.mean()) / advantages.std()
    advantages, returns = to_device(device, advantages, returns)
    return advantages, returns


# ---- core/trpo.py ----
def conjugate_gradients(Avp_f, b, nsteps, rdotr_tol=1e-10):
    x = zeros(b.size())
    r = b.clone()
    p = b.clone()
    rdotr = torch.dot(r, r)
    for i in range(nsteps):
        Avp = Avp_f(p)
        alpha = rdotr / torch.dot(p, Avp)
        x += alpha * p
        r -= alpha * Avp
        new_rdotr = torch.dot(r, r)
        betta = new_rdotr / rdotr
        p = r + betta * p
        rdotr = new_rdotr
        if rdotr < rdotr_tol:
            break
    return x


def line_search(model, f, x, fullstep, expected_improve_full, max_backtracks=10, accept_ratio=0.1):
    fval = f(True).item()
    for stepfrac in [.5 ** x for x in range(max_backtracks)]:
        x_new = x + stepfrac * fullstep
        set_flat_params_to(model, x_new)
        fval_new = f(True).item()
        actual_improve = fval - fval_new
        expected_improve = expected_improve_full * stepfrac
        ratio = actual_improve / expected_improve
        if ratio > accept_ratio:
            return True, x_new
    return False, x


def trpo_step(policy_net, value_net, states, actions, returns, advantages, max_kl, damping, l2_reg, use_fim=False):

    """update critic"""

    def get_value_loss(flat_params):
        set_flat_params_to(value_net, Tensor(flat_params))
        for param in value_net.parameters():
            if param.grad is not None:
                param.grad.data.fill_(0)
        values_pred = value_net(states)
        value_loss = (values_pred - returns).pow(2).mean()

        # weight decay
        for param in value_net.parameters():
            value_loss += param.pow(2).sum() * l2_reg
        value_loss.backward()
        return value_loss.item(), get_flat_grad_from(value_net.parameters()).cpu().numpy()

    flat_params, _, opt_info = optimize_standin.fmin_l_bfgs_b(get_value_loss,
                                                              get_flat_params_from(value_net).detach().cpu().numpy(),
                                                              maxiter=25)
    set_flat_params_to(value_net, Tensor(flat_params))

    """update policy"""
    with torch.no_grad():
        fixed_log_probs = policy_net.get_log_prob(states, actions)
    """define the loss function for TRPO"""
    def get_loss(volatile=False):
        with torch.set_grad_enabled(not volatile):
            log_probs = policy_net.get_log_prob(states, actions)
            action_loss = -advantages * torch.exp(log_probs - fixed_log_probs)
            return action_loss.mean()

    """directly compute Hessian*vector from KL"""
    def Fvp_direct(v):
        kl = policy_net.get_kl(states)
        kl = kl.mean()
        grads = torch.autograd.grad(kl, policy_net.parameters(), create_graph=True)
        flat_grad_kl = torch.cat([grad.view(-1) for grad in grads])
        kl_v = (flat_grad_kl * v).sum()
        grads = torch.autograd.grad(kl_v, policy_net.parameters())
        flat_grad_grad_kl = torch.cat([grad.contiguous().view(-1) for grad in grads]).detach()
        return flat_grad_grad_kl + v * damping

    Fvp = Fvp_direct

    loss = get_loss()
    grads = torch.autograd.grad(loss, policy_net.parameters())
    loss_grad = torch.cat([grad.view(-1) for grad in grads]).detach()
    stepdir = conjugate_gradients(Fvp, -loss_grad, 10)

    shs = 0.5 * (stepdir.dot(Fvp(stepdir)))
    lm = math.sqrt(max_kl / shs)
    fullstep = stepdir * lm
    expected_improve = -loss_grad.dot(fullstep)

    prev_params = get_flat_params_from(policy_net).detach()
    success, new_params = line_search(policy_net, get_loss, prev_params, fullstep, expected_improve)
    set_flat_params_to(policy_net, new_params)
    return success


# ---- core/agent.py + gym stand-ins ----
Transition = namedtuple('Transition', ('state', 'action', 'mask', 'next_state', 'reward'))


class PointEnv:
    """Stand-in for gym.make('Hopper-v2'): a 3-D point pushed toward the origin."""
    def __init__(self, seed=0):
        self.rng = np.random.RandomState(seed)

    def reset(self):
        self.t = 0
        self.s = self.rng.randn(3)
        return self.s

    def step(self, action):
        self.t += 1
        self.s = self.s + 0.1 * np.tanh(action)
        return self.s, -float(np.sum(self.s ** 2)), self.t >= 8, {}


class Agent:
    def __init__(self, env, policy, device):
        self.env, self.policy, self.device = env, policy, device

    def collect_samples(self, min_batch_size):
        memory = []
        while len(memory) < min_batch_size:
            state = self.env.reset()
            done = False
            while not done:
                state_var = torch.tensor(state).unsqueeze(0)
                with torch.no_grad():
                    action = self.policy.select_action(state_var)[0].numpy()
                next_state, reward, done, _ = self.env.step(action)
                memory.append(Transition(state, action, 0 if done else 1, next_state, reward))
                state = next_state
        return Transition(*zip(*memory)), {}


# ---- examples/trpo_gym.py ----
gamma, tau, l2_reg, max_kl, damping = 0.99, 0.95, 1e-3, 1e-2, 1e-2
device = torch.device('cpu')
np.random.seed(1)
torch.manual_seed(1)
state_dim, action_dim = 3, 3
policy_net = Policy(state_dim, action_dim, log_std=-0.0)
value_net = Value(state_dim)
agent = Agent(PointEnv(0), policy_net, device)


def update_params(batch):
    states = torch.from_numpy(np.stack(batch.state)).to(dtype).to(device)
    actions = torch.from_numpy(np.stack(batch.action)).to(dtype).to(device)
    rewards = torch.from_numpy(np.stack(batch.reward)).to(dtype).to(device)
    masks = torch.from_numpy(np.stack(batch.mask)).to(dtype).to(device)
    with torch.no_grad():
        values = value_net(states)

    """get advantage estimation from the trajectories"""
    advantages, returns = estimate_advantages(rewards, masks, values, gamma, tau, device)

    """perform TRPO update"""
    trpo_step(policy_net, value_net, states, actions, returns, advantages, max_kl, damping, l2_reg)


def main_loop():
    for i_iter in range(2):
        batch, log = agent.collect_samples(32)
        update_params(batch)
        print(i_iter, float(np.mean(batch.reward)))


main_loop()
