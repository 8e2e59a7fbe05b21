# Source: https://github.com/juliusfrost/dreamer-pytorch/commit/1e1e2e2
"""juliusfrost/dreamer-pytorch, dreamer/algos/dreamer_algo.py after the commit "don't use in-place
ops 'cuz gradients" (fixed twin): the actor loss builds `discount_arr = self.discount * torch.ones_like(imag_reward)`,
passes its slice `discount_arr[:-1]` to `compute_return` (where `discount * next_values` saves it for
the backward) and then built the top row of ones in place (`discount_arr[0] = 1`), which raised at
`actor_loss.backward()`. The commit's fix, kept here: build the array anew with `torch.cat`, so
the slice `compute_return` saved is left as it was.
rlpyt's replay buffer, the RSSM and the image decoder are small stand-ins; tiny sizes, CPU.
"""
import numpy as np
import torch
import torch.nn as nn
from torch.distributions import Normal


# ---- stand-ins: the world model's parts (rlpyt / dreamer.models) ----
class DenseModel(nn.Module):
    def __init__(self, feature_size, shape=(1,)):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(feature_size, 16), nn.ELU(), nn.Linear(16, int(np.prod(shape))))

    def forward(self, features):
        return Normal(self.net(features), 1.0)


class ActionDecoder(nn.Module):
    def __init__(self, feature_size, action_size):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(feature_size, 16), nn.ELU(), nn.Linear(16, action_size))

    def forward(self, features):
        return torch.tanh(self.net(features))


class Rollout(nn.Module):
    def __init__(self, feature_size, action_size):
        super().__init__()
        self.transition = nn.Linear(feature_size + action_size, feature_size)

    def rollout_policy(self, steps, policy, state):
        states = []
        for _ in range(steps):
            action = policy(state)
            state = torch.tanh(self.transition(torch.cat([state, action], -1)))
            states.append(state)
        return torch.stack(states), None


class AgentModel(nn.Module):
    def __init__(self, feature_size=8, action_size=2):
        super().__init__()
        self.observation_encoder = nn.Linear(12, feature_size)
        self.action_decoder = ActionDecoder(feature_size, action_size)
        self.rollout = Rollout(feature_size, action_size)
        self.reward_model = DenseModel(feature_size)
        self.value_model = DenseModel(feature_size)

    def policy(self, state):
        return self.action_decoder(state)


class Dreamer:
    def __init__(self, model, horizon=5, discount=0.99, discount_lambda=0.95, train_steps=3):
        self.model = model
        self.horizon = horizon
        self.discount = discount
        self.discount_lambda = discount_lambda
        self.train_steps = train_steps
        self.model_optimizer = torch.optim.Adam(
            list(model.observation_encoder.parameters()) + list(model.rollout.parameters())
            + list(model.reward_model.parameters()), lr=6e-4)
        self.actor_optimizer = torch.optim.Adam(model.action_decoder.parameters(), lr=8e-5)
        self.value_optimizer = torch.optim.Adam(model.value_model.parameters(), lr=8e-5)

    def optimize_agent(self, itr):
        for i in range(self.train_steps):
            observation = torch.randn(4, 3, 12)
            reward = torch.randn(4, 3, 1)
            model_loss, actor_loss, value_loss = self.loss(observation, reward, itr, i)
            model = self.model

            self.actor_optimizer.zero_grad()
            actor_loss.backward()
            torch.nn.utils.clip_grad_norm_(model.action_decoder.parameters(), 100.0)
            self.actor_optimizer.step()

            self.value_optimizer.zero_grad()
            value_loss.backward()
            self.value_optimizer.step()

            self.model_optimizer.zero_grad()
            model_loss.backward()
            self.model_optimizer.step()

    def loss(self, observation, reward, sample_itr, opt_itr):
        model = self.model
        batch_t, batch_b = observation.shape[:2]
        batch_size = batch_t * batch_b
        embed = model.observation_encoder(observation)
        reward_pred = model.reward_model(embed)
        model_loss = -torch.mean(reward_pred.log_prob(reward))

        with torch.no_grad():
            flat_post = embed.reshape(batch_size, -1)
        imag_feat, _ = model.rollout.rollout_policy(self.horizon, model.policy, flat_post)

        # freeze model parameters as only action model gradients needed
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


if __name__ == "__main__":
    torch.manual_seed(0)
    algo = Dreamer(AgentModel())
    for itr in range(2):
        algo.optimize_agent(itr)
    print("done")
