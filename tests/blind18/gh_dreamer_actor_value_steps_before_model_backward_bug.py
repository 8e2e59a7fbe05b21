# Source: https://github.com/juliusfrost/dreamer-pytorch/commit/6b7bae2fbc61dba5516139b9c68cda129273c58c
"""juliusfrost/dreamer-pytorch, dreamer/algos/dreamer_algo.py before "synchronize updates to remove
inplace operations error": `optimize_agent` backwards and steps the actor, then the value model, then
backwards `model_loss`, while `optim_initialize` builds `value_optimizer` over the *world model's*
parameters (`get_parameters(self.model_modules)`). On the torch of the report (1.5), `zero_grad()`
zeroed the model's gradients instead of dropping them, so from the second train step on the value
optimizer's Adam step rewrote the world model's weights in place before `model_loss.backward()`, which
raised "one of the variables needed for gradient computation has been modified by an inplace
operation". Torch 2.13's `zero_grad()` sets the gradients to None and Adam skips those weights, so
this program runs clean (no mark). The commit's fix, the `_ok` twin: all three backwards first, then
the clips and the steps. rlpyt's buffers/samplers and the image encoder/decoder are small stand-ins
(vector observations, a GRU-cell RSSM, random replay batches); CPU, tiny sizes.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from collections import namedtuple

# ---- stand-ins: rlpyt namedarraytuple / buffer_method, the replay samples ----
RSSMState = namedtuple('RSSMState', ['mean', 'std', 'stoch', 'deter'])


def buffer_method(state, method, *args):
    return RSSMState(*(getattr(t, method)(*args) for t in state))


def get_feat(state):
    return torch.cat((state.stoch, state.deter), dim=-1)


def get_dist(state):
    return torch.distributions.Normal(state.mean, state.std)


# ---- dreamer/utils/module.py ----
def get_parameters(modules):
    model_parameters = []
    for module in modules:
        model_parameters += list(module.parameters())
    return model_parameters


class FreezeParameters:
    def __init__(self, modules):
        self.modules = modules
        self.param_states = [p.requires_grad for p in get_parameters(self.modules)]

    def __enter__(self):
        for param in get_parameters(self.modules):
            param.requires_grad = False

    def __exit__(self, exc_type, exc_val, exc_tb):
        for i, param in enumerate(get_parameters(self.modules)):
            param.requires_grad = self.param_states[i]


# ---- dreamer/models (small) ----
class TransitionModel(nn.Module):
    def __init__(self, action_size, stoch=4, deter=8, hidden=8):
        super().__init__()
        self.stoch, self.deter = stoch, deter
        self._rnn_input = nn.Linear(action_size + stoch, hidden)
        self._cell = nn.GRUCell(hidden, deter)
        self._prior = nn.Linear(deter, 2 * stoch)

    def initial_state(self, batch_size):
        z = torch.zeros(batch_size, self.stoch)
        return RSSMState(z, z, z, torch.zeros(batch_size, self.deter))

    def forward(self, prev_action, prev_state):
        rnn_input = F.elu(self._rnn_input(torch.cat([prev_action, prev_state.stoch], dim=-1)))
        deter = self._cell(rnn_input, prev_state.deter)
        mean, std = torch.chunk(self._prior(deter), 2, dim=-1)
        std = F.softplus(std) + 0.1
        stoch = mean + std * torch.randn_like(std)
        return RSSMState(mean, std, stoch, deter)


class RepresentationModel(nn.Module):
    def __init__(self, transition_model, embed_size, stoch=4, deter=8):
        super().__init__()
        self._transition_model = transition_model
        self._posterior = nn.Linear(deter + embed_size, 2 * stoch)

    def forward(self, obs_embed, prev_action, prev_state):
        prior = self._transition_model(prev_action, prev_state)
        mean, std = torch.chunk(self._posterior(torch.cat([prior.deter, obs_embed], -1)), 2, dim=-1)
        std = F.softplus(std) + 0.1
        stoch = mean + std * torch.randn_like(std)
        return prior, RSSMState(mean, std, stoch, prior.deter)


class RSSMRollout:
    def __init__(self, representation_model, transition_model):
        self.representation_model = representation_model
        self.transition_model = transition_model

    def rollout_representation(self, steps, obs_embed, action, prev_state):
        priors, posteriors = [], []
        for t in range(steps):
            prior, posterior = self.representation_model(obs_embed[t], action[t], prev_state)
            priors.append(prior)
            posteriors.append(posterior)
            prev_state = posterior
        stack = lambda states: RSSMState(*(torch.stack(x) for x in zip(*states)))
        return stack(posteriors), stack(priors)

    def rollout_policy(self, steps, policy, prev_state):
        state = buffer_method(prev_state, 'detach')
        next_states = []
        for t in range(steps):
            action, _ = policy(state)
            state = self.transition_model(action, state)
            next_states.append(state)
        return RSSMState(*(torch.stack(x) for x in zip(*next_states))), None


class DenseModel(nn.Module):
    def __init__(self, in_size, out_size, hidden=16):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(in_size, hidden), nn.ELU(), nn.Linear(hidden, out_size))

    def forward(self, x):
        return torch.distributions.Normal(self.net(x), 1.0)


class ActionDecoder(nn.Module):
    def __init__(self, feat_size, action_size, hidden=16):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(feat_size, hidden), nn.ELU(), nn.Linear(hidden, 2 * action_size))

    def forward(self, feat):
        mean, std = torch.chunk(self.net(feat), 2, dim=-1)
        return torch.distributions.Normal(torch.tanh(mean), F.softplus(std) + 1e-4)


class AgentModel(nn.Module):
    def __init__(self, obs_size=6, action_size=2, embed_size=8, stoch=4, deter=8):
        super().__init__()
        feat = stoch + deter
        self.observation_encoder = nn.Sequential(nn.Linear(obs_size, embed_size), nn.ELU())
        self.observation_decoder = DenseModel(feat, obs_size)
        self.transition = TransitionModel(action_size, stoch, deter)
        self.representation = RepresentationModel(self.transition, embed_size, stoch, deter)
        self.rollout = RSSMRollout(self.representation, self.transition)
        self.reward_model = DenseModel(feat, 1)
        self.value_model = DenseModel(feat, 1)
        self.action_decoder = ActionDecoder(feat, action_size)

    def policy(self, state):
        action_dist = self.action_decoder(get_feat(state))
        action = action_dist.rsample()
        return action, action_dist


# ---- dreamer/algos/dreamer_algo.py ----
class Dreamer:
    def __init__(self, agent_model, batch_size=4, batch_length=5, train_steps=2, model_lr=6e-4,
                 value_lr=8e-5, actor_lr=8e-5, grad_clip=100.0, discount=0.99, discount_lambda=0.95,
                 horizon=4, free_nats=3, kl_scale=1):
        self.model = agent_model
        self._batch_size, self.batch_length, self.train_steps = batch_size, batch_length, train_steps
        self.model_lr, self.value_lr, self.actor_lr = model_lr, value_lr, actor_lr
        self.grad_clip, self.discount, self.discount_lambda = grad_clip, discount, discount_lambda
        self.horizon, self.free_nats, self.kl_scale = horizon, free_nats, kl_scale
        self.optim_kwargs = {}
        self.optim_initialize()

    def optim_initialize(self, rank=0):
        model = self.model
        self.model_modules = [model.observation_encoder,
                              model.observation_decoder,
                              model.reward_model,
                              model.representation,
                              model.transition]
        self.actor_modules = [model.action_decoder]
        self.value_modules = [model.value_model]
        self.model_optimizer = torch.optim.Adam(get_parameters(self.model_modules), lr=self.model_lr,
                                                **self.optim_kwargs)
        self.actor_optimizer = torch.optim.Adam(get_parameters(self.actor_modules), lr=self.actor_lr,
                                                **self.optim_kwargs)
        self.value_optimizer = torch.optim.Adam(get_parameters(self.model_modules), lr=self.value_lr,
                                                **self.optim_kwargs)

    def sample_batch(self):
        t, b = self.batch_length, self._batch_size
        return (torch.randn(t, b, 6), torch.rand(t, b, 2) * 2 - 1, torch.randn(t, b))

    def optimize_agent(self, itr):
        losses = []
        for i in range(self.train_steps):
            samples = self.sample_batch()
            model_loss, actor_loss, value_loss = self.loss(samples)

            self.actor_optimizer.zero_grad()
            actor_loss.backward()
            torch.nn.utils.clip_grad_norm_(get_parameters(self.actor_modules), self.grad_clip)
            self.actor_optimizer.step()

            self.value_optimizer.zero_grad()
            value_loss.backward()
            torch.nn.utils.clip_grad_norm_(get_parameters(self.value_modules), self.grad_clip)
            self.value_optimizer.step()

            self.model_optimizer.zero_grad()
            model_loss.backward()
            torch.nn.utils.clip_grad_norm_(get_parameters(self.model_modules), self.grad_clip)
            self.model_optimizer.step()

            with torch.no_grad():
                loss = model_loss + actor_loss + value_loss
            losses.append(loss.item())
        return losses

    def loss(self, samples):
        model = self.model
        observation, action, reward = samples
        reward = reward.unsqueeze(2)
        batch_t, batch_b = observation.shape[:2]
        batch_size = batch_t * batch_b

        embed = model.observation_encoder(observation)
        prev_state = model.transition.initial_state(batch_b)
        post, prior = model.rollout.rollout_representation(batch_t, embed, action, prev_state)

        # Model Loss
        feat = get_feat(post)
        image_pred = model.observation_decoder(feat)
        reward_pred = model.reward_model(feat)
        reward_loss = -torch.mean(reward_pred.log_prob(reward))
        image_loss = -torch.mean(image_pred.log_prob(observation))
        prior_dist = get_dist(prior)
        post_dist = get_dist(post)
        div = torch.mean(torch.distributions.kl.kl_divergence(post_dist, prior_dist))
        div = torch.clamp(div, -float('inf'), self.free_nats)
        model_loss = self.kl_scale * div + reward_loss + image_loss

        # Actor Loss
        with torch.no_grad():
            flat_post = buffer_method(post, 'reshape', batch_size, -1)
        with FreezeParameters(self.model_modules):
            imag_dist, _ = model.rollout.rollout_policy(self.horizon, model.policy, flat_post)
        imag_feat = get_feat(imag_dist)
        with FreezeParameters(self.model_modules + self.value_modules):
            imag_reward = model.reward_model(imag_feat).mean
            value = model.value_model(imag_feat).mean
        discount_arr = self.discount * torch.ones_like(imag_reward)
        returns = self.compute_return(imag_reward[:-1], value[:-1], discount_arr[:-1],
                                      bootstrap=value[-1], lambda_=self.discount_lambda)
        discount_arr = torch.cat([torch.ones_like(discount_arr[:1]), discount_arr[1:]])
        discount = torch.cumprod(discount_arr[:-1], 0)
        actor_loss = -torch.mean(discount * returns)

        # Value Loss
        with torch.no_grad():
            value_feat = imag_feat[:-1].detach()
            value_discount = discount.detach()
            value_target = returns.detach()
        value_pred = model.value_model(value_feat)
        log_prob = value_pred.log_prob(value_target)
        value_loss = -torch.mean(value_discount * log_prob)

        return model_loss, actor_loss, value_loss

    def compute_return(self, reward, value, discount, bootstrap, lambda_):
        next_values = torch.cat([value[1:], bootstrap[None]], 0)
        target = reward + discount * next_values * (1 - lambda_)
        timesteps = list(range(reward.shape[0] - 1, -1, -1))
        outputs = []
        accumulated_reward = bootstrap
        for t in timesteps:
            inp = target[t]
            discount_factor = discount[t]
            accumulated_reward = inp + discount_factor * lambda_ * accumulated_reward
            outputs.append(accumulated_reward)
        returns = torch.flip(torch.stack(outputs), [0])
        return returns


if __name__ == '__main__':
    torch.manual_seed(0)
    np.random.seed(0)
    algo = Dreamer(AgentModel())
    for itr in range(2):
        print(itr, algo.optimize_agent(itr))
