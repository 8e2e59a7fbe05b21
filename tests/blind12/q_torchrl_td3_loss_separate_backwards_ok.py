# Source: https://github.com/pytorch/rl/issues/1187
"""Fixed twin of q_torchrl_td3_loss_separate_backwards_bug.py. The user repurposes a working torchrl DDPG script (separate actor and critic optimizers, one
backward per loss) for TD3Loss. TD3Loss computed both losses in one pass: the Q-networks run once on
the stacked batch of (obs, actor action) and (obs, replay action), so `loss_actor` and `loss_qvalue`
share that graph; `loss["loss_actor"].backward()` frees it and `loss["loss_qvalue"].backward()`
raises "Trying to backward through the graph a second time" (the actor loss also leaks gradients
into the critics: the issue's title). Here the maintainers' fix (the refactor that followed, PRs
1240/1377): actor and value losses are computed apart, the actor loss through detached critic
parameters, so each backward walks a graph of its own. torchrl's
collector, replay buffer, TD3Loss and soft updater are small stand-ins written in the file.
"""
import copy

import torch
import torch.nn as nn
from torch.func import functional_call


class Actor(nn.Module):
    def __init__(self, obs_dim, act_dim, hidden=32):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim, hidden), nn.ReLU(), nn.Linear(hidden, act_dim), nn.Tanh())

    def forward(self, obs):
        return self.net(obs)


class QValue(nn.Module):
    def __init__(self, obs_dim, act_dim, hidden=32):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim + act_dim, hidden), nn.ReLU(), nn.Linear(hidden, 1))

    def forward(self, obs, action):
        return self.net(torch.cat([obs, action], -1))


class TD3Loss(nn.Module):
    """Stand-in for torchrl.objectives.TD3Loss with the actor and value losses separated."""

    def __init__(self, actor_network, qvalue_network, num_qvalue_nets=2, gamma=0.99,
                 policy_noise=0.2, noise_clip=0.5):
        super().__init__()
        self.actor_network = actor_network
        self.target_actor_network = copy.deepcopy(actor_network).requires_grad_(False)
        self.qvalue_network = nn.ModuleList([copy.deepcopy(qvalue_network) for _ in range(num_qvalue_nets)])
        for q in self.qvalue_network[1:]:
            for p in q.parameters():
                nn.init.normal_(p, std=0.1)
        self.target_qvalue_network = copy.deepcopy(self.qvalue_network).requires_grad_(False)
        self.gamma, self.policy_noise, self.noise_clip = gamma, policy_noise, noise_clip

    def actor_loss(self, td):
        obs = td["observation"]
        actor_action = self.actor_network(obs)
        q = self.qvalue_network[0]
        detached_params = {k: v.detach() for k, v in q.named_parameters()}
        state_action_value_actor = functional_call(q, detached_params, (obs, actor_action))
        return -state_action_value_actor.mean()

    def value_loss(self, td):
        obs, action = td["observation"], td["action"]
        with torch.no_grad():
            noise = (torch.randn_like(action) * self.policy_noise).clamp(-self.noise_clip, self.noise_clip)
            next_action = (self.target_actor_network(td["next_observation"]) + noise).clamp(-1, 1)
            next_q = torch.stack([q(td["next_observation"], next_action) for q in self.target_qvalue_network])
            target_value = td["reward"] + self.gamma * (1 - td["done"]) * next_q.min(0).values

        pred_val = torch.stack([q(obs, action) for q in self.qvalue_network])
        return (pred_val - target_value.unsqueeze(0)).pow(2).mean(dim=(1, 2)).sum()

    def forward(self, td):
        return {"loss_actor": self.actor_loss(td), "loss_qvalue": self.value_loss(td)}


class SoftUpdate:
    def __init__(self, loss_module, eps=0.995):
        self.loss_module, self.eps = loss_module, eps

    @torch.no_grad()
    def step(self):
        pairs = [(self.loss_module.target_actor_network, self.loss_module.actor_network),
                 (self.loss_module.target_qvalue_network, self.loss_module.qvalue_network)]
        for target, source in pairs:
            for tp, sp in zip(target.parameters(), source.parameters()):
                tp.mul_(self.eps).add_((1 - self.eps) * sp)


class ReplayBuffer:
    def __init__(self):
        self.storage = []

    def extend(self, data):
        self.storage.extend({k: v[i] for k, v in data.items()} for i in range(data["observation"].shape[0]))

    def sample(self, batch_size):
        idx = torch.randint(0, len(self.storage), (batch_size,)).tolist()
        return {k: torch.stack([self.storage[i][k] for i in idx]) for k in self.storage[0]}


def collector(policy, obs_dim, act_dim, frames_per_batch=16, total_batches=3):
    for _ in range(total_batches):
        obs = torch.randn(frames_per_batch, obs_dim)
        with torch.no_grad():
            action = (policy(obs) + 0.1 * torch.randn(frames_per_batch, act_dim)).clamp(-1, 1)
        yield {"observation": obs, "action": action, "reward": torch.randn(frames_per_batch, 1),
               "done": torch.zeros(frames_per_batch, 1), "next_observation": torch.randn(frames_per_batch, obs_dim)}


obs_dim, act_dim = 3, 1
actor = Actor(obs_dim, act_dim)
qvalue = QValue(obs_dim, act_dim)
loss_fn = TD3Loss(actor, qvalue, num_qvalue_nets=2)
updater = SoftUpdate(loss_fn, eps=0.995)

actor_opt = torch.optim.Adam(loss_fn.actor_network.parameters(), lr=1e-3)
critic_opt = torch.optim.Adam(loss_fn.qvalue_network.parameters(), lr=1e-3)
rb = ReplayBuffer()

for i, data in enumerate(collector(actor, obs_dim, act_dim)):
    rb.extend(data)
    for _ in range(2):
        sample = rb.sample(8)
        loss = loss_fn(sample)

        actor_opt.zero_grad()
        loss["loss_actor"].backward()
        actor_opt.step()

        critic_opt.zero_grad()
        loss["loss_qvalue"].backward()
        critic_opt.step()

        updater.step()
    print(i, loss["loss_actor"].item(), loss["loss_qvalue"].item())
