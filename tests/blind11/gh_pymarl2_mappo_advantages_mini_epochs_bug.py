# Source: https://github.com/hijkzzz/pymarl2/issues/46
"""pymarl2's PPO/MAPPO learner with mini_epochs > 1: the advantages are computed from the
critic once, outside the mini-epoch loop, and reused in every mini-epoch's actor loss without
being detached, so the second mini-epoch's backward goes through the critic graph the first one
freed: "Trying to backward through the graph a second time". The reporter's first option is the
right fix (_ok): detach the advantages (the critic has its own loss), not retain_graph=True.
The episode batch, the agent controller and the environment are small stand-ins written here.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class RNNAgent(nn.Module):
    def __init__(self, input_shape, n_actions, hidden=16):
        super().__init__()
        self.fc1 = nn.Linear(input_shape, hidden)
        self.fc2 = nn.Linear(hidden, n_actions)

    def forward(self, inputs):
        return self.fc2(F.relu(self.fc1(inputs)))


class BasicMAC:
    def __init__(self, input_shape, n_actions):
        self.agent = RNNAgent(input_shape, n_actions)

    def forward(self, batch, t):
        return torch.softmax(self.agent(batch["obs"][:, t]), dim=-1)

    def parameters(self):
        return self.agent.parameters()


class CentralVCritic(nn.Module):
    def __init__(self, state_shape, hidden=16):
        super().__init__()
        self.fc = nn.Sequential(nn.Linear(state_shape, hidden), nn.ReLU(), nn.Linear(hidden, 1))

    def forward(self, batch):
        return self.fc(batch["state"]).squeeze(-1)


class PPOLearner:
    def __init__(self, mac, critic, args):
        self.mac, self.critic, self.args = mac, critic, args
        self.agent_optimiser = torch.optim.Adam(mac.parameters(), lr=args["lr"])
        self.critic_optimiser = torch.optim.Adam(critic.parameters(), lr=args["critic_lr"])

    def compute_advantages(self, batch, rewards):
        values = self.critic(batch)
        returns = rewards.flip(1).cumsum(1).flip(1)
        return returns - values

    def train_critic(self, batch, rewards):
        values = self.critic(batch)
        returns = rewards.flip(1).cumsum(1).flip(1)
        critic_loss = ((returns - values) ** 2).mean()
        self.critic_optimiser.zero_grad()
        critic_loss.backward()
        self.critic_optimiser.step()

    def train(self, batch):
        T = batch["obs"].size(1)
        actions = batch["actions"]
        with torch.no_grad():
            old_pi = torch.stack([self.mac.forward(batch, t) for t in range(T)], dim=1)
        old_pi_taken = torch.gather(old_pi, dim=-1, index=actions).squeeze(-1)
        old_log_pi_taken = torch.log(old_pi_taken + 1e-10)

        advantages = self.compute_advantages(batch, batch["reward"])

        for k in range(self.args["mini_epochs"]):
            pi = torch.stack([self.mac.forward(batch, t) for t in range(T)], dim=1)
            pi_taken = torch.gather(pi, dim=-1, index=actions).squeeze(-1)
            log_pi_taken = torch.log(pi_taken + 1e-10)
            ratios = torch.exp(log_pi_taken - old_log_pi_taken)
            surr1 = ratios * advantages[..., None]
            surr2 = torch.clamp(ratios, 1 - self.args["eps_clip"], 1 + self.args["eps_clip"]) * advantages[..., None]
            entropy = -torch.sum(pi * torch.log(pi + 1e-10), dim=-1)
            pg_loss = -(torch.min(surr1, surr2) + self.args["entropy_coef"] * entropy).mean()
            self.agent_optimiser.zero_grad()
            pg_loss.backward()  # expect: GG101
            self.agent_optimiser.step()

        self.train_critic(batch, batch["reward"])


def make_batch(bs=2, T=5, n_agents=3, obs_dim=6, state_dim=8, n_actions=4):
    return {"obs": torch.randn(bs, T, n_agents, obs_dim), "state": torch.randn(bs, T, state_dim),
            "actions": torch.randint(0, n_actions, (bs, T, n_agents, 1)), "reward": torch.randn(bs, T)}


args = {"lr": 5e-4, "critic_lr": 5e-4, "mini_epochs": 4, "eps_clip": 0.2, "entropy_coef": 0.01}
learner = PPOLearner(BasicMAC(6, 4), CentralVCritic(8), args)
for episode in range(2):
    learner.train(make_batch())
