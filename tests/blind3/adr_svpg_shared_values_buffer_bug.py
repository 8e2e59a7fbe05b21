# Source: https://github.com/montrealrobotics/active-domainrand/issues/9
"""Active Domain Randomization's SVPG (common/svpg/svpg.py, --continuous-svpg): SVPG.step stores
every particle's critic values in one tensor, `self.values[i][t] = value`, so each slice
assignment chains all particles' critic graphs together. SVPG.train then, particle by particle,
backwards critic_loss (retain_graph=True) and steps that particle's optimizer; the next
particle's critic_loss.backward walks the shared values tensor back into the first particle's
critic, whose weights the step changed: "RuntimeError in critic_loss.backward(retain_graph=True)"
(pytorch 1.10). Particles are the repository's actor/critic (smaller), the simulator rewards are
random, and the SVGD kernel step after the loop uses torch.nn.utils' vector helpers.
compute_returns' running return R carries the critic/KL graph that no backward walks (returns
are detached): observed GG202."""
import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim
from torch.distributions.kl import kl_divergence
from torch.nn.utils import parameters_to_vector, vector_to_parameters

LEARNING_RATE = 3e-4
HIDDEN_DIMENSIONS = 16


class DiagGaussian(nn.Module):
    def __init__(self, num_inputs, num_outputs):
        super(DiagGaussian, self).__init__()
        self.fc_mean = nn.Linear(num_inputs, num_outputs)
        self.logstd = nn.Parameter(torch.zeros(num_outputs))

    def forward(self, x):
        action_mean = self.fc_mean(x)
        return torch.distributions.Normal(action_mean, self.logstd.exp())


class SVPGParticle(nn.Module):
    """Implements a AC architecture for a Discrete Advantage
    Actor Critic Policy, used inside of SVPG
    """
    def __init__(self, input_dim, output_dim, hidden_dim, freeze=False):
        super(SVPGParticle, self).__init__()
        self.critic = nn.Sequential(nn.Linear(input_dim, hidden_dim), nn.Tanh(),
                                    nn.Linear(hidden_dim, hidden_dim), nn.Tanh(), nn.Linear(hidden_dim, 1))
        self.actor_hidden = nn.Sequential(nn.Linear(input_dim, hidden_dim), nn.Tanh(),
                                          nn.Linear(hidden_dim, hidden_dim), nn.Tanh())
        self.dist = DiagGaussian(hidden_dim, output_dim)
        if freeze:
            for param in self.parameters():
                param.requires_grad = False
        self.reset()

    def forward(self, x):
        actor_hidden = self.actor_hidden(x)
        dist = self.dist(actor_hidden)
        value = self.critic(x)
        return dist, value

    def reset(self):
        self.saved_log_probs = []
        self.saved_klds = []
        self.rewards = []


class SVPG:
    def __init__(self, nagents, nparams, max_step_length, svpg_rollout_length, svpg_horizon, temperature,
                 kld_coefficient):
        self.particles = []
        self.prior_particles = []
        self.optimizers = []
        self.max_step_length = max_step_length
        self.svpg_rollout_length = svpg_rollout_length
        self.svpg_horizon = svpg_horizon
        self.temperature = temperature
        self.nagents = nagents
        self.gamma = 0.99
        self.nparams = nparams
        self.kld_coefficient = kld_coefficient
        self.last_states = np.random.uniform(0, 1, (self.nagents, self.nparams))
        self.timesteps = np.zeros(self.nagents)

        for i in range(self.nagents):
            policy = SVPGParticle(self.nparams, self.nparams, HIDDEN_DIMENSIONS)
            prior_policy = SVPGParticle(self.nparams, self.nparams, HIDDEN_DIMENSIONS, freeze=True)
            optimizer = optim.Adam(policy.parameters(), lr=LEARNING_RATE)
            self.particles.append(policy)
            self.prior_particles.append(prior_policy)
            self.optimizers.append(optimizer)

    def _Kxx_dxKxx(self, X):
        X_np = X.cpu().data.numpy()
        pairwise_dists = ((X_np[:, None, :] - X_np[None, :, :]) ** 2).sum(-1)
        h = np.median(pairwise_dists)
        h = np.sqrt(0.5 * h / np.log(self.nagents+1))
        Kxx = torch.exp(-torch.from_numpy(pairwise_dists).float() / h**2 / 2)
        dxKxx = -(Kxx).matmul(X)
        sumKxx = Kxx.sum(1)
        for i in range(X.shape[1]):
            dxKxx[:, i] = dxKxx[:, i] + X[:, i].matmul(sumKxx)
        dxKxx /= (h ** 2)
        return Kxx, dxKxx

    def select_action(self, policy_idx, state):
        state = torch.from_numpy(state).float().unsqueeze(0)
        policy = self.particles[policy_idx]
        prior_policy = self.prior_particles[policy_idx]
        dist, value = policy(state)
        prior_dist, _ = prior_policy(state)
        action = dist.sample()
        policy.saved_log_probs.append(dist.log_prob(action).sum(-1))
        policy.saved_klds.append(kl_divergence(dist, prior_dist).sum(-1))
        action = action.squeeze().cpu().detach().numpy()
        return action, value

    def compute_returns(self, next_value, rewards, masks, klds):
        R = next_value
        returns = []
        for step in reversed(range(len(rewards))):
            R = self.gamma * masks[step] * R + (rewards[step] - self.kld_coefficient * klds[step])  # expect: GG202
            returns.insert(0, R)
        return returns

    def step(self):
        self.simulation_instances = np.zeros((self.nagents, self.svpg_rollout_length, self.nparams))
        self.values = torch.zeros((self.nagents, self.svpg_rollout_length, 1)).float()
        self.masks = np.ones((self.nagents, self.svpg_rollout_length))

        for i in range(self.nagents):
            self.particles[i].reset()
            current_sim_params = self.last_states[i]
            for t in range(self.svpg_rollout_length):
                self.simulation_instances[i][t] = current_sim_params
                action, value = self.select_action(i, current_sim_params)
                self.values[i][t] = value
                clipped_action = action * self.max_step_length
                next_params = np.clip(current_sim_params + clipped_action, 0, 1)
                if np.array_equal(next_params, current_sim_params) or self.timesteps[i] + 1 == self.svpg_horizon:
                    next_params = np.random.uniform(0, 1, (self.nparams,))
                    self.masks[i][t] = 0  # done = True
                    self.timesteps[i] = 0
                current_sim_params = next_params
                self.timesteps[i] += 1
            self.last_states[i] = current_sim_params
        return np.array(self.simulation_instances)

    def train(self, simulator_rewards):
        policy_grads = []
        parameters = []

        for i in range(self.nagents):
            policy_grad_particle = []
            _, next_value = self.select_action(i, self.last_states[i])
            particle_rewards = torch.from_numpy(simulator_rewards[i]).float()
            masks = torch.from_numpy(self.masks[i]).float()

            returns = self.compute_returns(next_value, particle_rewards, masks, self.particles[i].saved_klds)
            returns = torch.cat(returns).detach()
            advantages = returns - self.values[i]

            for log_prob, advantage in zip(self.particles[i].saved_log_probs, advantages):
                policy_grad_particle.append(log_prob * advantage.detach())

            # Compute value loss, update critic
            self.optimizers[i].zero_grad()
            critic_loss = 0.5 * advantages.pow(2).mean()
            critic_loss.backward(retain_graph=True)  # expect: GG103
            self.optimizers[i].step()

            # Store policy gradients for SVPG update
            self.optimizers[i].zero_grad()
            policy_grad = -torch.cat(policy_grad_particle).mean()
            policy_grad.backward()

            params = [p for p in self.particles[i].parameters() if p.grad is not None]
            policy_grads.append(parameters_to_vector([p.grad for p in params]).unsqueeze(0))
            parameters.append(parameters_to_vector(params).detach().unsqueeze(0))

        parameters = torch.cat(parameters)
        Kxx, dxKxx = self._Kxx_dxKxx(parameters)
        policy_grads = 1 / self.temperature * torch.cat(policy_grads)
        grad_logp = torch.mm(Kxx, policy_grads)
        grad_theta = (grad_logp + dxKxx) / self.nagents

        for i in range(self.nagents):
            params = [p for p in self.particles[i].parameters() if p.grad is not None]
            grads = [p.grad for p in params]
            vector_to_parameters(grad_theta[i], grads)
            self.optimizers[i].step()


svpg = SVPG(nagents=3, nparams=2, max_step_length=0.05, svpg_rollout_length=4, svpg_horizon=25,
            temperature=10.0, kld_coefficient=0.0)
for outer in range(2):
    simulation_settings = svpg.step()
    simulator_rewards = np.random.randn(3, 4)  # the discriminator's rewards for each rollout
    svpg.train(simulator_rewards)
