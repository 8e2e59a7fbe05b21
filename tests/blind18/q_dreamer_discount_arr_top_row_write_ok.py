# Source: https://github.com/juliusfrost/dreamer-pytorch/commit/1e1e2e2022258ac048858604bb0c60647cbfb084
"""https://github.com/juliusfrost/dreamer-pytorch/commit/1e1e2e2022258ac048858604bb0c60647cbfb084
dreamer-pytorch's `Dreamer.loss` (dreamer/algos/dreamer_algo.py), fixed as the commit does ("don't
use in-place ops 'cuz gradients"): `compute_return` multiplied the imagined values by
`discount_arr[:-1]` (the product saved that view), and the top row was then set with
`discount_arr[0] = 1` in place, which broke `actor_loss.backward()`. The fix builds a new tensor,
`discount_arr = torch.cat([torch.ones_like(discount_arr[:1]), discount_arr[1:]])`. rlpyt's namedarraytuple/buffer_method, the replay buffer and
the conv encoder/decoder are small stand-ins written here (vector observations, random data)."""
from collections import namedtuple

import numpy as np
import torch
import torch.distributions as td
import torch.nn as nn
import torch.nn.functional as tf

RSSMState = namedtuple('RSSMState', ['mean', 'std', 'stoch', 'deter'])
LossInfo = namedtuple('LossInfo', ['model_loss', 'actor_loss', 'value_loss', 'prior_entropy', 'post_entropy',
                                   'divergence', 'reward_loss', 'image_loss'])
loss_info_fields = list(LossInfo._fields)


def buffer_method(state, method, *args):
    """Stand-in for rlpyt.utils.buffer.buffer_method: call `method` on every field."""
    return type(state)(*(getattr(x, method)(*args) for x in state))


def stack_states(rssm_states: list, dim):
    return RSSMState(
        torch.stack([state.mean for state in rssm_states], dim=dim),
        torch.stack([state.std for state in rssm_states], dim=dim),
        torch.stack([state.stoch for state in rssm_states], dim=dim),
        torch.stack([state.deter for state in rssm_states], dim=dim),
    )


def get_feat(rssm_state: RSSMState):
    return torch.cat((rssm_state.stoch, rssm_state.deter), dim=-1)


def get_dist(rssm_state: RSSMState):
    return td.Normal(rssm_state.mean, rssm_state.std)


class RSSMTransition(nn.Module):
    def __init__(self, action_size, stochastic_size=6, deterministic_size=8, hidden_size=8, activation=nn.ELU):
        super().__init__()
        self._stoch_size = stochastic_size
        self._deter_size = deterministic_size
        self._cell = nn.GRUCell(hidden_size, deterministic_size)
        self._rnn_input_model = nn.Sequential(nn.Linear(action_size + stochastic_size, hidden_size), activation())
        self._stochastic_prior_model = nn.Sequential(nn.Linear(deterministic_size, hidden_size), activation(),
                                                     nn.Linear(hidden_size, 2 * stochastic_size))

    def initial_state(self, batch_size, **kwargs):
        return RSSMState(torch.zeros(batch_size, self._stoch_size, **kwargs),
                         torch.zeros(batch_size, self._stoch_size, **kwargs),
                         torch.zeros(batch_size, self._stoch_size, **kwargs),
                         torch.zeros(batch_size, self._deter_size, **kwargs))

    def forward(self, prev_action, prev_state):
        rnn_input = self._rnn_input_model(torch.cat([prev_action, prev_state.stoch], dim=-1))
        deter_state = self._cell(rnn_input, prev_state.deter)
        mean, std = torch.chunk(self._stochastic_prior_model(deter_state), 2, dim=-1)
        std = tf.softplus(std) + 0.1
        stoch_state = td.Normal(mean, std).rsample()
        return RSSMState(mean, std, stoch_state, deter_state)


class RSSMRepresentation(nn.Module):
    def __init__(self, transition_model, obs_embed_size, stochastic_size=6, deterministic_size=8, hidden_size=8):
        super().__init__()
        self._transition_model = transition_model
        self._stochastic_posterior_model = nn.Sequential(nn.Linear(deterministic_size + obs_embed_size, hidden_size),
                                                         nn.ELU(), nn.Linear(hidden_size, 2 * stochastic_size))

    def initial_state(self, batch_size, **kwargs):
        return self._transition_model.initial_state(batch_size, **kwargs)

    def forward(self, obs_embed, prev_action, prev_state):
        prior_state = self._transition_model(prev_action, prev_state)
        x = torch.cat([prior_state.deter, obs_embed], -1)
        mean, std = torch.chunk(self._stochastic_posterior_model(x), 2, dim=-1)
        std = tf.softplus(std) + 0.1
        stoch_state = td.Normal(mean, std).rsample()
        return prior_state, RSSMState(mean, std, stoch_state, prior_state.deter)


class RSSMRollout(nn.Module):
    def __init__(self, representation_model, transition_model):
        super().__init__()
        self.representation_model = representation_model
        self.transition_model = transition_model

    def rollout_representation(self, steps, obs_embed, action, prev_state):
        priors, posteriors = [], []
        for t in range(steps):
            prior_state, posterior_state = self.representation_model(obs_embed[t], action[t], prev_state)
            priors.append(prior_state)
            posteriors.append(posterior_state)
            prev_state = posterior_state
        return stack_states(priors, dim=0), stack_states(posteriors, dim=0)

    def rollout_policy(self, steps, policy, prev_state):
        state = prev_state
        next_states, actions = [], []
        for p in self.transition_model.parameters():
            p.requires_grad = False
        state = buffer_method(state, 'detach')
        for t in range(steps):
            action, _ = policy(buffer_method(state, 'detach'))
            state = self.transition_model(action, state)
            next_states.append(state)
            actions.append(action)
        next_states = stack_states(next_states, dim=0)
        actions = torch.stack(actions, dim=0)
        for p in self.transition_model.parameters():
            p.requires_grad = True
        return next_states, actions


class DenseModel(nn.Module):
    def __init__(self, feature_size, output_shape, layers, hidden_size, activation=nn.ELU):
        super().__init__()
        self._output_shape = output_shape
        model = [nn.Linear(feature_size, hidden_size), activation()]
        for i in range(layers - 1):
            model += [nn.Linear(hidden_size, hidden_size), activation()]
        model += [nn.Linear(hidden_size, int(np.prod(output_shape)))]
        self.model = nn.Sequential(*model)

    def forward(self, features):
        dist_inputs = self.model(features)
        reshaped_inputs = torch.reshape(dist_inputs, features.shape[:-1] + self._output_shape)
        return td.independent.Independent(td.Normal(reshaped_inputs, 1), len(self._output_shape))


class ActionDecoder(nn.Module):
    """Tanh-normal action head (simplified)."""

    def __init__(self, action_size, feature_size, hidden_size, layers):
        super().__init__()
        self.net = DenseModel(feature_size, (2 * action_size,), layers, hidden_size).model

    def forward(self, feat):
        mean, std = torch.chunk(self.net(feat), 2, -1)
        return td.Normal(torch.tanh(mean), tf.softplus(std) + 1e-4)


class AgentModel(nn.Module):
    def __init__(self, obs_size=10, action_size=2, stochastic_size=6, deterministic_size=8, hidden_size=8):
        super().__init__()
        self.observation_encoder = nn.Sequential(nn.Linear(obs_size, 12), nn.ELU())
        feature_size = stochastic_size + deterministic_size
        self.observation_decoder = DenseModel(feature_size, (obs_size,), 1, 12)
        self.transition = RSSMTransition(action_size, stochastic_size, deterministic_size, hidden_size)
        self.representation = RSSMRepresentation(self.transition, 12, stochastic_size, deterministic_size, hidden_size)
        self.rollout = RSSMRollout(self.representation, self.transition)
        self.action_decoder = ActionDecoder(action_size, feature_size, 8, 2)
        self.reward_model = DenseModel(feature_size, (1,), 2, 8)
        self.value_model = DenseModel(feature_size, (1,), 2, 8)

    def policy(self, state):
        action_dist = self.action_decoder(get_feat(state))
        return torch.tanh(action_dist.rsample()), action_dist


class Dreamer:
    def __init__(self, agent_model, batch_size=4, batch_length=6, train_steps=2, model_lr=6e-4, value_lr=8e-5,
                 actor_lr=8e-5, grad_clip=100.0, discount=0.99, discount_lambda=0.95, horizon=5, free_nats=3,
                 kl_scale=1):
        self.model = agent_model
        self._batch_size = batch_size
        self.batch_length = batch_length
        self.train_steps = train_steps
        self.grad_clip = grad_clip
        self.discount = discount
        self.discount_lambda = discount_lambda
        self.horizon = horizon
        self.free_nats = free_nats
        self.kl_scale = kl_scale
        model = self.model
        model_parameters = list(model.observation_encoder.parameters()) + \
            list(model.observation_decoder.parameters()) + list(model.reward_model.parameters()) + \
            list(model.representation.parameters()) + list(model.transition.parameters())
        self.model_optimizer = torch.optim.Adam(model_parameters, lr=model_lr)
        self.actor_optimizer = torch.optim.Adam(model.action_decoder.parameters(), lr=actor_lr)
        self.value_optimizer = torch.optim.Adam(model.value_model.parameters(), lr=value_lr)

    def sample_batch(self):
        """Stand-in for the replay buffer: (T+1, B, ...) observations, actions, rewards."""
        T, B = self.batch_length, self._batch_size
        return torch.randn(T + 1, B, 10), torch.rand(T + 1, B, 2) * 2 - 1, torch.randn(T + 1, B)

    def optimize_agent(self, itr):
        opt_info = {k: [] for k in ['loss'] + loss_info_fields}
        for i in range(self.train_steps):
            all_observation, all_action, all_reward = self.sample_batch()
            observation = all_observation[:-1]
            action = all_action[1:]
            reward = all_reward[1:].unsqueeze(2)
            model_loss, actor_loss, value_loss, loss_info = self.loss(observation, action, reward, itr, i)

            model = self.model
            self.actor_optimizer.zero_grad()
            actor_loss.backward()
            torch.nn.utils.clip_grad_norm_(model.action_decoder.parameters(), self.grad_clip)
            self.actor_optimizer.step()

            self.value_optimizer.zero_grad()
            value_loss.backward()
            torch.nn.utils.clip_grad_norm_(model.value_model.parameters(), self.grad_clip)
            self.value_optimizer.step()

            self.model_optimizer.zero_grad()
            model_loss.backward()
            self.model_optimizer.step()

            loss = model_loss + actor_loss + value_loss
            opt_info['loss'].append(loss.item())
            for field in loss_info_fields:
                opt_info[field].append(getattr(loss_info, field).item())
        return opt_info

    def loss(self, observation, action, reward, sample_itr, opt_itr):
        model = self.model
        batch_t, batch_b = observation.shape[:2]
        batch_size = batch_t * batch_b

        embed = model.observation_encoder(observation)
        prev_state = model.representation.initial_state(batch_b, dtype=action.dtype)
        prior, post = model.rollout.rollout_representation(batch_t, embed, action, prev_state)

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

        with torch.no_grad():
            flat_post = buffer_method(post, 'reshape', batch_size, -1)
        imag_dist, _ = model.rollout.rollout_policy(self.horizon, model.policy, flat_post)
        imag_feat = get_feat(imag_dist)

        for p in model.reward_model.parameters():
            p.requires_grad = False
        for p in model.value_model.parameters():
            p.requires_grad = False
        imag_reward = model.reward_model(imag_feat).mean
        value = model.value_model(imag_feat).mean
        for p in model.reward_model.parameters():
            p.requires_grad = True
        for p in model.value_model.parameters():
            p.requires_grad = True

        # Compute the exponential discounted sum of rewards
        discount_arr = self.discount * torch.ones_like(imag_reward)
        returns = self.compute_return(imag_reward[:-1], value[:-1], discount_arr[:-1],
                                      bootstrap=value[-1], lambda_=self.discount_lambda)
        # Make the top row 1 so the cumulative product starts with discount^0
        discount_arr = torch.cat([torch.ones_like(discount_arr[:1]), discount_arr[1:]])
        discount = torch.cumprod(discount_arr[:-1], 0)
        actor_loss = -torch.mean(discount * returns)

        with torch.no_grad():
            value_feat = imag_feat[:-1].detach()
            value_discount = discount.detach()
            value_target = returns.detach()
        value_pred = model.value_model(value_feat)
        log_prob = value_pred.log_prob(value_target)
        value_loss = -torch.mean(value_discount * log_prob.unsqueeze(2))

        with torch.no_grad():
            prior_ent = torch.mean(prior_dist.entropy())
            post_ent = torch.mean(post_dist.entropy())
            loss_info = LossInfo(model_loss, actor_loss, value_loss, prior_ent, post_ent, div, reward_loss, image_loss)
        return model_loss, actor_loss, value_loss, loss_info

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


torch.manual_seed(0)
algo = Dreamer(AgentModel())
for itr in range(2):
    info = algo.optimize_agent(itr)
    print(itr, np.mean(info['loss']))
