# Source: https://github.com/toshikwa/fqf-iqn-qrdqn.pytorch/issues/3
"""fqf-iqn-qrdqn.pytorch's FQFAgent.learn() with the maintainer's fix (commit "Bump torch up to
1.5.0"): the fraction network gets `state_embeddings.detach()`, and the entropy loss, which
depends on the fraction network only, goes into the fraction loss alone, not into the quantile
loss. The quantile backward no longer walks the fraction net's Linear after its step, and the
fraction backward need not retain its graph (the commit kept retain_graph=True; nothing walks that
graph again, so it is dropped here). The Atari
env, replay memory and logging are small stand-ins written here.
"""
import numpy as np
import torch
from torch import nn
import torch.nn.functional as F


def initialize_weights_xavier(m, gain=1.0):
    if isinstance(m, nn.Linear) or isinstance(m, nn.Conv2d):
        torch.nn.init.xavier_uniform_(m.weight, gain=gain)
        if m.bias is not None:
            torch.nn.init.constant_(m.bias, 0)


def initialize_weights_he(m):
    if isinstance(m, nn.Linear) or isinstance(m, nn.Conv2d):
        torch.nn.init.kaiming_uniform_(m.weight)
        if m.bias is not None:
            torch.nn.init.constant_(m.bias, 0)


class Flatten(nn.Module):
    def forward(self, x):
        return x.view(x.size(0), -1)


class DQNBase(nn.Module):
    def __init__(self, num_channels, embedding_dim=64):
        super(DQNBase, self).__init__()
        self.net = nn.Sequential(
            nn.Conv2d(num_channels, 16, kernel_size=8, stride=4, padding=0), nn.ReLU(),
            nn.Conv2d(16, 32, kernel_size=4, stride=2, padding=0), nn.ReLU(),
            nn.Conv2d(32, 64, kernel_size=3, stride=1, padding=0), nn.ReLU(),
            Flatten(),
        ).apply(initialize_weights_he)
        self.embedding_dim = embedding_dim

    def forward(self, states):
        return self.net(states)


class FractionProposalNetwork(nn.Module):
    def __init__(self, N=32, embedding_dim=64):
        super(FractionProposalNetwork, self).__init__()
        self.net = nn.Sequential(nn.Linear(embedding_dim, N)).apply(
            lambda x: initialize_weights_xavier(x, gain=0.01))
        self.N = N
        self.embedding_dim = embedding_dim

    def forward(self, state_embeddings):
        batch_size = state_embeddings.shape[0]
        log_probs = F.log_softmax(self.net(state_embeddings), dim=1)
        probs = log_probs.exp()
        tau_0 = torch.zeros((batch_size, 1), dtype=state_embeddings.dtype, device=state_embeddings.device)
        taus_1_N = torch.cumsum(probs, dim=1)
        taus = torch.cat((tau_0, taus_1_N), dim=1)
        tau_hats = (taus[:, :-1] + taus[:, 1:]).detach() / 2.
        entropies = -(log_probs * probs).sum(dim=-1, keepdim=True)
        return taus, tau_hats, entropies


class CosineEmbeddingNetwork(nn.Module):
    def __init__(self, num_cosines=16, embedding_dim=64):
        super(CosineEmbeddingNetwork, self).__init__()
        self.net = nn.Sequential(nn.Linear(num_cosines, embedding_dim), nn.ReLU())
        self.num_cosines = num_cosines
        self.embedding_dim = embedding_dim

    def forward(self, taus):
        batch_size = taus.shape[0]
        N = taus.shape[1]
        i_pi = np.pi * torch.arange(start=1, end=self.num_cosines + 1, dtype=taus.dtype,
                                    device=taus.device).view(1, 1, self.num_cosines)
        cosines = torch.cos(taus.view(batch_size, N, 1) * i_pi).view(batch_size * N, self.num_cosines)
        return self.net(cosines).view(batch_size, N, self.embedding_dim)


class QuantileNetwork(nn.Module):
    def __init__(self, num_actions, embedding_dim=64):
        super(QuantileNetwork, self).__init__()
        self.net = nn.Sequential(nn.Linear(embedding_dim, 32), nn.ReLU(), nn.Linear(32, num_actions))
        self.num_actions = num_actions
        self.embedding_dim = embedding_dim

    def forward(self, state_embeddings, tau_embeddings):
        batch_size = state_embeddings.shape[0]
        N = tau_embeddings.shape[1]
        state_embeddings = state_embeddings.view(batch_size, 1, self.embedding_dim)
        embeddings = (state_embeddings * tau_embeddings).view(batch_size * N, self.embedding_dim)
        quantiles = self.net(embeddings)
        return quantiles.view(batch_size, N, self.num_actions)


class FQF(nn.Module):
    def __init__(self, num_channels, num_actions, N=8, num_cosines=16, embedding_dim=64, target=False):
        super(FQF, self).__init__()
        self.dqn_net = DQNBase(num_channels=num_channels, embedding_dim=embedding_dim)
        self.cosine_net = CosineEmbeddingNetwork(num_cosines=num_cosines, embedding_dim=embedding_dim)
        self.quantile_net = QuantileNetwork(num_actions=num_actions, embedding_dim=embedding_dim)
        if not target:
            self.fraction_net = FractionProposalNetwork(N=N, embedding_dim=embedding_dim)
        self.N = N
        self.target = target

    def sample_noise(self):
        pass

    def calculate_state_embeddings(self, states):
        return self.dqn_net(states)

    def calculate_fractions(self, states=None, state_embeddings=None, fraction_net=None):
        if state_embeddings is None:
            state_embeddings = self.dqn_net(states)
        fraction_net = fraction_net if self.target else self.fraction_net
        return fraction_net(state_embeddings)

    def calculate_quantiles(self, taus, states=None, state_embeddings=None):
        if state_embeddings is None:
            state_embeddings = self.dqn_net(states)
        tau_embeddings = self.cosine_net(taus)
        return self.quantile_net(state_embeddings, tau_embeddings)

    def calculate_q(self, taus=None, tau_hats=None, states=None, state_embeddings=None, fraction_net=None):
        if state_embeddings is None:
            state_embeddings = self.dqn_net(states)
        if taus is None or tau_hats is None:
            taus, tau_hats, _ = self.calculate_fractions(state_embeddings=state_embeddings,
                                                         fraction_net=fraction_net)
        quantile_hats = self.calculate_quantiles(tau_hats, state_embeddings=state_embeddings)
        return ((taus[:, 1:, None] - taus[:, :-1, None]) * quantile_hats).sum(dim=1)


def update_params(optim, loss, networks, retain_graph=False, grad_cliping=None):
    optim.zero_grad()
    loss.backward(retain_graph=retain_graph)
    if grad_cliping:
        for net in networks:
            torch.nn.utils.clip_grad_norm_(net.parameters(), grad_cliping)
    optim.step()


def calculate_huber_loss(td_errors, kappa=1.0):
    return torch.where(td_errors.abs() <= kappa, 0.5 * td_errors.pow(2), kappa * (td_errors.abs() - 0.5 * kappa))


def calculate_quantile_huber_loss(td_errors, taus, weights=None, kappa=1.0):
    element_wise_huber_loss = calculate_huber_loss(td_errors, kappa)
    element_wise_quantile_huber_loss = torch.abs(
        taus[..., None] - (td_errors.detach() < 0).float()) * element_wise_huber_loss / kappa
    batch_quantile_huber_loss = element_wise_quantile_huber_loss.sum(dim=1).mean(dim=1, keepdim=True)
    if weights is not None:
        return (batch_quantile_huber_loss * weights).mean()
    return batch_quantile_huber_loss.mean()


def evaluate_quantile_at_action(s_quantiles, actions):
    batch_size = s_quantiles.shape[0]
    N = s_quantiles.shape[1]
    action_index = actions[..., None].expand(batch_size, N, 1)
    return s_quantiles.gather(dim=2, index=action_index)


class RandomMemory:
    """Stand-in for the replay memory: random Atari-like frames."""
    def __init__(self, num_channels, num_actions):
        self.num_channels, self.num_actions = num_channels, num_actions

    def sample(self, batch_size):
        states = torch.rand(batch_size, self.num_channels, 36, 36)
        actions = torch.randint(0, self.num_actions, (batch_size, 1))
        rewards = torch.randn(batch_size, 1)
        next_states = torch.rand(batch_size, self.num_channels, 36, 36)
        dones = torch.zeros(batch_size, 1)
        return states, actions, rewards, next_states, dones


class FQFAgent:
    def __init__(self, num_channels=4, num_actions=3, batch_size=4, N=8, kappa=1.0, lr=5e-5,
                 fraction_lr=2.5e-9, gamma=0.99, multi_step=1, ent_coef=0, grad_cliping=None):
        self.online_net = FQF(num_channels, num_actions, N=N)
        self.target_net = FQF(num_channels, num_actions, N=N, target=True)
        self.update_target()
        self.fraction_optim = torch.optim.RMSprop(self.online_net.fraction_net.parameters(),
                                                  lr=fraction_lr, alpha=0.95, eps=0.00001)
        self.quantile_optim = torch.optim.Adam(
            list(self.online_net.dqn_net.parameters()) + list(self.online_net.cosine_net.parameters())
            + list(self.online_net.quantile_net.parameters()), lr=lr, eps=1e-2 / batch_size)
        self.memory = RandomMemory(num_channels, num_actions)
        self.batch_size, self.N, self.kappa = batch_size, N, kappa
        self.gamma_n = gamma ** multi_step
        self.ent_coef = ent_coef
        self.grad_cliping = grad_cliping
        self.use_per = False
        self.double_q_learning = False
        self.learning_steps = 0

    def update_target(self):
        self.target_net.dqn_net.load_state_dict(self.online_net.dqn_net.state_dict())
        self.target_net.quantile_net.load_state_dict(self.online_net.quantile_net.state_dict())
        self.target_net.cosine_net.load_state_dict(self.online_net.cosine_net.state_dict())

    def learn(self):
        self.learning_steps += 1
        self.online_net.sample_noise()
        self.target_net.sample_noise()
        states, actions, rewards, next_states, dones = self.memory.sample(self.batch_size)
        weights = None

        state_embeddings = self.online_net.calculate_state_embeddings(states)
        taus, tau_hats, entropies = self.online_net.calculate_fractions(state_embeddings=state_embeddings.detach())
        current_sa_quantile_hats = evaluate_quantile_at_action(
            self.online_net.calculate_quantiles(tau_hats, state_embeddings=state_embeddings), actions)

        fraction_loss = self.calculate_fraction_loss(
            state_embeddings.detach(), current_sa_quantile_hats.detach(), taus, actions, weights)
        quantile_loss, mean_q, errors = self.calculate_quantile_loss(
            state_embeddings, tau_hats, current_sa_quantile_hats, actions, rewards, next_states, dones, weights)
        entropy_loss = -self.ent_coef * entropies.mean()

        update_params(
            self.fraction_optim, fraction_loss + entropy_loss,
            networks=[self.online_net.fraction_net], retain_graph=False, grad_cliping=self.grad_cliping)
        update_params(
            self.quantile_optim, quantile_loss,
            networks=[self.online_net.dqn_net, self.online_net.cosine_net, self.online_net.quantile_net],
            retain_graph=False, grad_cliping=self.grad_cliping)

    def calculate_fraction_loss(self, state_embeddings, sa_quantile_hats, taus, actions, weights):
        batch_size = state_embeddings.shape[0]
        with torch.no_grad():
            sa_quantiles = evaluate_quantile_at_action(
                self.online_net.calculate_quantiles(taus=taus[:, 1:-1], state_embeddings=state_embeddings),
                actions)
        values_1 = sa_quantiles - sa_quantile_hats[:, :-1]
        signs_1 = sa_quantiles > torch.cat([sa_quantile_hats[:, :1], sa_quantiles[:, :-1]], dim=1)
        values_2 = sa_quantiles - sa_quantile_hats[:, 1:]
        signs_2 = sa_quantiles < torch.cat([sa_quantiles[:, 1:], sa_quantile_hats[:, -1:]], dim=1)
        gradient_of_taus = (torch.where(signs_1, values_1, -values_1)
                            + torch.where(signs_2, values_2, -values_2)).view(batch_size, self.N - 1)
        return (gradient_of_taus * taus[:, 1:-1]).sum(dim=1).mean()

    def calculate_quantile_loss(self, state_embeddings, tau_hats, current_sa_quantile_hats, actions,
                                rewards, next_states, dones, weights):
        with torch.no_grad():
            next_state_embeddings = self.target_net.calculate_state_embeddings(next_states)
            next_q = self.target_net.calculate_q(state_embeddings=next_state_embeddings,
                                                 fraction_net=self.online_net.fraction_net)
            next_actions = torch.argmax(next_q, dim=1, keepdim=True)
            next_sa_quantile_hats = evaluate_quantile_at_action(
                self.target_net.calculate_quantiles(taus=tau_hats, state_embeddings=next_state_embeddings),
                next_actions).transpose(1, 2)
            target_sa_quantile_hats = rewards[..., None] + (
                1.0 - dones[..., None]) * self.gamma_n * next_sa_quantile_hats
        td_errors = target_sa_quantile_hats - current_sa_quantile_hats
        quantile_huber_loss = calculate_quantile_huber_loss(td_errors, tau_hats, weights, self.kappa)
        return quantile_huber_loss, next_q.detach().mean().item(), td_errors.detach().abs()


agent = FQFAgent()
for step in range(3):
    agent.learn()
