# Source: https://github.com/starry-sky6688/MADDPG/issues/27
"""MADDPG agent's train() with the update order swapped as in the question (critic first, "as in
the paper"): actor_loss is built from the critic before critic_optim.step() changes the critic's
weights in place, so actor_loss.backward() fails (the maintainer: compute and update the critic
where it does not invalidate the actor loss's graph)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

N_AGENTS, OBS, ACT, GAMMA = 2, 3, 2, 0.95


class Actor(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.action_out = nn.Linear(OBS, 16), nn.Linear(16, ACT)

    def forward(self, x):
        return torch.tanh(self.action_out(F.relu(self.fc1(x))))


class Critic(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.q_out = nn.Linear(N_AGENTS * (OBS + ACT), 16), nn.Linear(16, 1)

    def forward(self, state, action):
        return self.q_out(F.relu(self.fc1(torch.cat(state + action, dim=1))))


class MADDPG:
    def __init__(self, agent_id):
        self.agent_id = agent_id
        self.actor_network, self.critic_network = Actor(), Critic()
        self.critic_target_network = Critic()
        self.critic_target_network.load_state_dict(self.critic_network.state_dict())
        self.actor_optim = torch.optim.Adam(self.actor_network.parameters(), lr=1e-3)
        self.critic_optim = torch.optim.Adam(self.critic_network.parameters(), lr=1e-3)

    def train(self, transitions, other_agents):
        r = transitions["r_%d" % self.agent_id]
        o, u, o_next = transitions["o"], transitions["u"], transitions["o_next"]
        u_next = []
        with torch.no_grad():
            index = 0
            for agent_id in range(N_AGENTS):
                if agent_id == self.agent_id:
                    u_next.append(self.actor_network(o_next[agent_id]))
                else:
                    u_next.append(other_agents[index].actor_network(o_next[agent_id]))
                    index += 1
            q_next = self.critic_target_network(o_next, u_next).detach()
            target_q = (r.unsqueeze(1) + GAMMA * q_next).detach()
        q_value = self.critic_network(o, u)
        critic_loss = (target_q - q_value).pow(2).mean()

        u = list(u)
        u[self.agent_id] = self.actor_network(o[self.agent_id])
        actor_loss = -self.critic_network(o, u).mean()

        self.critic_optim.zero_grad()
        critic_loss.backward()
        self.critic_optim.step()

        self.actor_optim.zero_grad()
        actor_loss.backward()  # expect: GG103
        self.actor_optim.step()


agents = [MADDPG(i) for i in range(N_AGENTS)]
B = 5
transitions = {"o": [torch.randn(B, OBS) for _ in range(N_AGENTS)],
               "u": [torch.rand(B, ACT) * 2 - 1 for _ in range(N_AGENTS)],
               "o_next": [torch.randn(B, OBS) for _ in range(N_AGENTS)],
               **{"r_%d" % i: torch.randn(B) for i in range(N_AGENTS)}}
for agent in agents:
    agent.train(transitions, [a for a in agents if a is not agent])
