# Source: https://discuss.pytorch.org/t/can-not-create-a-new-calculation-graph-after-the-backward-propagation/45026
"""DQN and DDPG trained together on one CNN+LSTM state encoder, as in the question: loss_dqn is
backwarded and stepped, then the encoder is forward-propagated again for the DDPG actor, and
loss_ddpg_actor.backward() runs. The LSTM's (h, c) kept on self are detached when stored, so a
new forward starts a new graph instead of extending the one loss_dqn.backward() freed."""
import torch
import torch.nn as nn
import torch.nn.functional as F

SIZE_BATCH, N_ENV, N_ACT, GAMMA_DQN = 4, 3, 2, 0.9


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.cnn = nn.Sequential(nn.Conv1d(1, 2, 3, padding=1), nn.ReLU())
        self.lstm = nn.LSTM(2 * 6, 8, batch_first=True)
        self.dqn_eval = nn.Linear(8 + N_ENV, N_ACT)
        self.dqn_target = nn.Linear(8 + N_ENV, N_ACT)
        self.actor = nn.Sequential(nn.Linear(8 + N_ENV, 1), nn.Tanh())
        self.critic = nn.Linear(8 + N_ENV + 1, 1)
        self.h = self.c = None

    def forward_cnnlstm(self, s_cnnlstm, flag_optim=True):
        feats = self.cnn(s_cnnlstm.reshape(-1, 1, 6)).reshape(SIZE_BATCH, 1, -1)
        state = None if self.h is None else (self.h, self.c)
        out, (h, c) = self.lstm(feats, state)
        self.h, self.c = h.detach(), c.detach()
        return out[:, -1], h, c

    def forward_dqn_eval(self, s_env, out):
        return self.dqn_eval(torch.cat([out, s_env], 1))

    def forward_dqn_target(self, s_env, out):
        return self.dqn_target(torch.cat([out, s_env], 1))

    def forward_actor(self, s_env, out):
        return self.actor(torch.cat([out, s_env], 1))

    def forward_critic(self, s_env, out, a):
        return self.critic(torch.cat([out, s_env, a], 1))


class Agent:
    def __init__(self):
        self.model = Model()
        m = self.model
        self.optimizer_cnnlstm = torch.optim.Adam([*m.cnn.parameters(), *m.lstm.parameters()], lr=1e-3)
        self.optimizer_dqn = torch.optim.Adam(m.dqn_eval.parameters(), lr=1e-3)
        self.optimizer_actor = torch.optim.Adam(m.actor.parameters(), lr=1e-3)
        self.loss_dqn = nn.MSELoss()

    def learn(self, s_cnnlstm, s_dqn, a_dqn, r, s_dqn_next):
        # dqn
        s_cnnlstm_out, _, _ = self.model.forward_cnnlstm(s_cnnlstm, flag_optim=True)
        q_eval_dqn = self.model.forward_dqn_eval(s_dqn, s_cnnlstm_out).gather(1, a_dqn)
        q_next_dqn = self.model.forward_dqn_target(s_dqn_next, s_cnnlstm_out).detach()
        q_target_dqn = r + GAMMA_DQN * q_next_dqn.max(dim=1)[0].reshape(SIZE_BATCH, 1)
        loss_dqn = self.loss_dqn(q_eval_dqn, q_target_dqn)
        self.optimizer_cnnlstm.zero_grad()
        self.optimizer_dqn.zero_grad()
        loss_dqn.backward()
        self.optimizer_cnnlstm.step()
        self.optimizer_dqn.step()
        loss_dqn = loss_dqn.detach().numpy()
        # ddpg actor: forward the cnnlstm again
        s_cnnlstm_out, _, _ = self.model.forward_cnnlstm(s_cnnlstm, flag_optim=True)
        a = self.model.forward_actor(s_dqn, s_cnnlstm_out)
        loss_ddpg_actor = -self.model.forward_critic(s_dqn, s_cnnlstm_out, a).mean()
        self.optimizer_cnnlstm.zero_grad()
        self.optimizer_actor.zero_grad()
        loss_ddpg_actor.backward()
        self.optimizer_cnnlstm.step()
        self.optimizer_actor.step()


agent = Agent()
for step in range(2):
    agent.learn(torch.randn(SIZE_BATCH, 6), torch.randn(SIZE_BATCH, N_ENV),
                torch.randint(0, N_ACT, (SIZE_BATCH, 1)), torch.randn(SIZE_BATCH, 1),
                torch.randn(SIZE_BATCH, N_ENV))
