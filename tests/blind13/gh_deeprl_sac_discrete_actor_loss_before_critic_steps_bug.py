# Source: https://github.com/p-christ/Deep-Reinforcement-Learning-Algorithms-with-PyTorch/issues/56
"""Deep-Reinforcement-Learning-Algorithms-with-PyTorch's SAC_Discrete on CartPole: SAC.learn()
computes both critic losses and the actor loss (which goes through critic_local and critic_local_2),
then update_all_parameters steps the two critic optimizers before backwarding the actor loss.
The critics' weights were changed in place by the steps, so actor_loss.backward() raises "one of
the variables needed for gradient computation has been modified by an inplace operation" (the
report's AddmmBackward in calculate_actor_loss). gym, nn_builder's NN and the replay buffer are
small stand-ins written here.
"""
import random
from collections import deque, namedtuple

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical


class CartPoleStandIn:
    """Stand-in for gym's CartPole-v0: 4-d observation, 2 discrete actions."""
    _max_episode_steps = 12

    def reset(self):
        self.t = 0
        return np.random.randn(4).astype(np.float32)

    def step(self, action):
        self.t += 1
        return np.random.randn(4).astype(np.float32), 1.0, self.t >= 10, {}


def create_NN_standin(input_dim, output_dim, hidden, final_activation=None):
    """Stand-in for nn_builder.pytorch.NN.NN."""
    layers = [nn.Linear(input_dim, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
              nn.Linear(hidden, output_dim)]
    if final_activation == "Softmax":
        layers.append(nn.Softmax(dim=1))
    return nn.Sequential(*layers)


def create_actor_distribution(action_types, actor_output, action_size):
    if action_types == "DISCRETE":
        return Categorical(actor_output)
    raise ValueError(action_types)


class Replay_Buffer(object):
    def __init__(self, buffer_size, batch_size, seed):
        self.memory = deque(maxlen=buffer_size)
        self.batch_size = batch_size
        self.experience = namedtuple("Experience", field_names=["state", "action", "reward", "next_state", "done"])
        random.seed(seed)

    def add_experience(self, states, actions, rewards, next_states, dones):
        self.memory.append(self.experience(states, actions, rewards, next_states, dones))

    def sample(self):
        experiences = random.sample(self.memory, k=self.batch_size)
        states = torch.from_numpy(np.vstack([e.state for e in experiences])).float()
        actions = torch.from_numpy(np.vstack([e.action for e in experiences])).float()
        rewards = torch.from_numpy(np.vstack([e.reward for e in experiences])).float()
        next_states = torch.from_numpy(np.vstack([e.next_state for e in experiences])).float()
        dones = torch.from_numpy(np.vstack([int(e.done) for e in experiences])).float()
        return states, actions, rewards, next_states, dones

    def __len__(self):
        return len(self.memory)


class Base_Agent(object):
    def __init__(self, config):
        self.config = config
        self.environment = config.environment
        self.action_types = "DISCRETE"
        self.action_size = 2
        self.state_size = 4
        self.device = "cpu"
        self.episode_number = 0
        self.global_step_number = 0
        self.done = False

    def create_NN(self, input_dim, output_dim, key_to_use=None, override_seed=None):
        hyperparameters = self.hyperparameters[key_to_use]
        return create_NN_standin(input_dim, output_dim, hyperparameters["linear_hidden_units"],
                                 hyperparameters["final_layer_activation"])

    def reset_game(self):
        self.state = self.environment.reset()
        self.done = False

    def conduct_action(self, action):
        self.next_state, self.reward, self.done, _ = self.environment.step(action)

    def save_experience(self, experience):
        self.memory.add_experience(*experience)

    def enough_experiences_to_learn_from(self):
        return len(self.memory) > self.hyperparameters["batch_size"]

    def take_optimisation_step(self, optimizer, network, loss, clipping_norm=None, retain_graph=False):
        if not isinstance(network, list):
            network = [network]
        optimizer.zero_grad()
        loss.backward(retain_graph=retain_graph)  # expect: GG103
        if clipping_norm is not None:
            for net in network:
                torch.nn.utils.clip_grad_norm_(net.parameters(), clipping_norm)
        optimizer.step()

    def soft_update_of_target_network(self, local_model, target_model, tau):
        for target_param, local_param in zip(target_model.parameters(), local_model.parameters()):
            target_param.data.copy_(tau * local_param.data + (1.0 - tau) * target_param.data)

    @staticmethod
    def copy_model_over(from_model, to_model):
        for to_model, from_model in zip(to_model.parameters(), from_model.parameters()):
            to_model.data.copy_(from_model.data.clone())

    def run_n_episodes(self, num_episodes):
        while self.episode_number < num_episodes:
            self.reset_game()
            self.step()


class SAC_Discrete(Base_Agent):
    def __init__(self, config):
        Base_Agent.__init__(self, config)
        self.hyperparameters = config.hyperparameters
        self.critic_local = self.create_NN(input_dim=self.state_size, output_dim=self.action_size, key_to_use="Critic")
        self.critic_local_2 = self.create_NN(input_dim=self.state_size, output_dim=self.action_size,
                                             key_to_use="Critic", override_seed=self.config.seed + 1)
        self.critic_optimizer = torch.optim.Adam(self.critic_local.parameters(),
                                                 lr=self.hyperparameters["Critic"]["learning_rate"])
        self.critic_optimizer_2 = torch.optim.Adam(self.critic_local_2.parameters(),
                                                   lr=self.hyperparameters["Critic"]["learning_rate"])
        self.critic_target = self.create_NN(input_dim=self.state_size, output_dim=self.action_size, key_to_use="Critic")
        self.critic_target_2 = self.create_NN(input_dim=self.state_size, output_dim=self.action_size, key_to_use="Critic")
        Base_Agent.copy_model_over(self.critic_local, self.critic_target)
        Base_Agent.copy_model_over(self.critic_local_2, self.critic_target_2)
        self.memory = Replay_Buffer(self.hyperparameters["Critic"]["buffer_size"], self.hyperparameters["batch_size"],
                                    self.config.seed)
        self.actor_local = self.create_NN(input_dim=self.state_size, output_dim=self.action_size, key_to_use="Actor")
        self.actor_optimizer = torch.optim.Adam(self.actor_local.parameters(),
                                                lr=self.hyperparameters["Actor"]["learning_rate"])
        self.automatic_entropy_tuning = self.hyperparameters["automatically_tune_entropy_hyperparameter"]
        if self.automatic_entropy_tuning:
            self.target_entropy = -np.log((1.0 / self.action_size)) * 0.98
            self.log_alpha = torch.zeros(1, requires_grad=True, device=self.device)
            self.alpha = self.log_alpha.exp()
            self.alpha_optim = torch.optim.Adam([self.log_alpha], lr=self.hyperparameters["Actor"]["learning_rate"])
        else:
            self.alpha = self.hyperparameters["entropy_term_weight"]

    def step(self):
        while not self.done:
            self.action = self.pick_action()
            self.conduct_action(self.action)
            if self.time_for_critic_and_actor_to_learn():
                for _ in range(self.hyperparameters["learning_updates_per_learning_session"]):
                    self.learn()
            mask = False if self.environment.t >= self.environment._max_episode_steps else self.done
            self.save_experience(experience=(self.state, self.action, self.reward, self.next_state, mask))
            self.state = self.next_state
            self.global_step_number += 1
        self.episode_number += 1

    def pick_action(self):
        if self.global_step_number < self.hyperparameters["min_steps_before_learning"]:
            return random.randint(0, self.action_size - 1)
        state = torch.FloatTensor(self.state).unsqueeze(0)
        action, _, _ = self.produce_action_and_action_info(state)
        return action.detach().cpu().numpy()[0]

    def time_for_critic_and_actor_to_learn(self):
        return self.global_step_number > self.hyperparameters["min_steps_before_learning"] and \
            self.enough_experiences_to_learn_from() and \
            self.global_step_number % self.hyperparameters["update_every_n_steps"] == 0

    def learn(self):
        state_batch, action_batch, reward_batch, next_state_batch, mask_batch = self.memory.sample()
        qf1_loss, qf2_loss = self.calculate_critic_losses(state_batch, action_batch, reward_batch, next_state_batch, mask_batch)
        policy_loss, log_pi = self.calculate_actor_loss(state_batch)
        if self.automatic_entropy_tuning:
            alpha_loss = self.calculate_entropy_tuning_loss(log_pi)
        else:
            alpha_loss = None
        self.update_all_parameters(qf1_loss, qf2_loss, policy_loss, alpha_loss)

    def produce_action_and_action_info(self, state):
        action_probabilities = self.actor_local(state)
        max_probability_action = torch.argmax(action_probabilities).unsqueeze(0)
        action_distribution = create_actor_distribution(self.action_types, action_probabilities, self.action_size)
        action = action_distribution.sample().cpu()
        z = action_probabilities == 0.0
        z = z.float() * 1e-8
        log_action_probabilities = torch.log(action_probabilities + z)
        return action, (action_probabilities, log_action_probabilities), max_probability_action

    def calculate_critic_losses(self, state_batch, action_batch, reward_batch, next_state_batch, mask_batch):
        with torch.no_grad():
            next_state_action, (action_probabilities, log_action_probabilities), _ = \
                self.produce_action_and_action_info(next_state_batch)
            qf1_next_target = self.critic_target(next_state_batch)
            qf2_next_target = self.critic_target_2(next_state_batch)
            min_qf_next_target = action_probabilities * (torch.min(qf1_next_target, qf2_next_target)
                                                         - self.alpha * log_action_probabilities)
            min_qf_next_target = min_qf_next_target.sum(dim=1).unsqueeze(-1)
            next_q_value = reward_batch + (1.0 - mask_batch) * self.hyperparameters["discount_rate"] * min_qf_next_target
        qf1 = self.critic_local(state_batch).gather(1, action_batch.long())
        qf2 = self.critic_local_2(state_batch).gather(1, action_batch.long())
        qf1_loss = F.mse_loss(qf1, next_q_value)
        qf2_loss = F.mse_loss(qf2, next_q_value)
        return qf1_loss, qf2_loss

    def calculate_actor_loss(self, state_batch):
        action, (action_probabilities, log_action_probabilities), _ = self.produce_action_and_action_info(state_batch)
        qf1_pi = self.critic_local(state_batch)
        qf2_pi = self.critic_local_2(state_batch)
        min_qf_pi = torch.min(qf1_pi, qf2_pi)
        inside_term = self.alpha * log_action_probabilities - min_qf_pi
        policy_loss = action_probabilities * inside_term
        policy_loss = policy_loss.mean()
        log_action_probabilities = torch.sum(log_action_probabilities * action_probabilities, dim=1)
        return policy_loss, log_action_probabilities

    def calculate_entropy_tuning_loss(self, log_pi):
        alpha_loss = -(self.log_alpha * (log_pi + self.target_entropy).detach()).mean()
        return alpha_loss

    def update_all_parameters(self, critic_loss_1, critic_loss_2, actor_loss, alpha_loss):
        self.take_optimisation_step(self.critic_optimizer, self.critic_local, critic_loss_1,
                                    self.hyperparameters["Critic"]["gradient_clipping_norm"])
        self.take_optimisation_step(self.critic_optimizer_2, self.critic_local_2, critic_loss_2,
                                    self.hyperparameters["Critic"]["gradient_clipping_norm"])
        self.take_optimisation_step(self.actor_optimizer, self.actor_local, actor_loss,
                                    self.hyperparameters["Actor"]["gradient_clipping_norm"])
        self.soft_update_of_target_network(self.critic_local, self.critic_target, self.hyperparameters["Critic"]["tau"])
        self.soft_update_of_target_network(self.critic_local_2, self.critic_target_2, self.hyperparameters["Critic"]["tau"])
        if alpha_loss is not None:
            self.take_optimisation_step(self.alpha_optim, None, alpha_loss, None)
            self.alpha = self.log_alpha.exp()


class Config(object):
    pass


config = Config()
config.seed = 1
config.environment = CartPoleStandIn()
config.hyperparameters = {
    "Actor": {"learning_rate": 3e-4, "linear_hidden_units": 16, "final_layer_activation": "Softmax",
              "gradient_clipping_norm": 5},
    "Critic": {"learning_rate": 3e-4, "linear_hidden_units": 16, "final_layer_activation": None,
               "buffer_size": 1000, "tau": 0.005, "gradient_clipping_norm": 5},
    "min_steps_before_learning": 8, "batch_size": 8, "discount_rate": 0.99,
    "update_every_n_steps": 1, "learning_updates_per_learning_session": 1,
    "automatically_tune_entropy_hyperparameter": True, "entropy_term_weight": None,
}
agent = SAC_Discrete(config)
agent.run_n_episodes(3)
