# Source: https://github.com/rentruewang/brief/issues/1
"""The Q-learning summariser with a replay storage that keeps values, not graphs: Storage.save
detaches the saved states, encoder outputs and rewards, as a replay buffer should (the thread's
answer defends retain_graph=True; it only moves the failure to the first replay after an optimizer
step). Each replay then builds a fresh graph through the Q-function from the stored values and is
backwarded once, without retain_graph; the target network's values are computed without grad."""
import copy

import torch
from numpy import random
from torch import nn, optim
from torch.distributions import Categorical
from torch.nn import functional as F


class Encoder(nn.Module):
    def __init__(self, voc_size, hidden_size, num_layers):
        super().__init__()
        self.embedding = nn.Embedding(voc_size, hidden_size)
        self.gru = nn.GRU(hidden_size, hidden_size, num_layers)

    def forward(self, sentence, states):
        return self.gru(self.embedding(sentence), states)


class Decoder(nn.Module):
    def __init__(self, voc_size, hidden_size, timesteps, num_layers):
        super().__init__()
        self.hidden_size = hidden_size
        self.embedding = nn.Embedding(voc_size, hidden_size)
        self.gru = nn.GRU(2 * hidden_size, hidden_size, num_layers)

    def forward(self, word, states, gru_out):
        emb = self.embedding(word.view(1, -1))
        scores = torch.einsum('tbh,bh->tb', gru_out, states[-1])
        context = (F.softmax(scores, dim=0).unsqueeze(-1) * gru_out).sum(0, keepdim=True)
        output, states = self.gru(torch.cat([emb, context], -1), states)
        return output, states


def short_reward(sentence, pad, sReward, on):
    batch = sentence.shape[1]
    reward = torch.zeros([batch], device=on)
    pads = torch.tensor([pad] * batch, device=on)
    for i in range(int(sentence.shape[0])):
        reward += ((sentence[i] == pads).float())
    reward *= sReward
    return reward


def select_value(QOutput, indexList):
    assert int(QOutput.shape[0]) == len(indexList)
    output = []
    for batch, index in enumerate(indexList):
        output.append(QOutput[batch, index])
    return torch.stack(output, dim=0)


def take_action(QFunc, states, epsilon, categorical=False):
    output, states = QFunc(*states)
    if random.uniform(low=0., high=1.) < epsilon():
        index = torch.randint(low=0, high=output.shape[-1], size=[output.shape[1]])
    elif categorical:
        index = Categorical(F.softmax(output[0], dim=-1)).sample()
    else:
        index = output[0].argmax(-1)
    return index, states


class Storage:
    def __init__(self, decay_value, multistep=True):
        self.decay_value = decay_value
        self.data = []
        self.multistep = multistep

    def save(self, states, actions, rewards):
        states = [[t.detach() for t in S] for S in states]
        rewards = [r.detach() for r in rewards]
        self.data.append([states, actions, rewards])

    def refresh(self):
        to_discard = []
        for index in range(len(self.data)):
            if random.uniform(low=0., high=1.) < self.decay_value:
                to_discard.append(index)
        for index in reversed(to_discard):
            self.data.pop(index)

    def optimize(self, QFunc, Qoptim, QEval, QlossFunc, on):
        for S, action, reward in self.data:
            output, _ = QFunc(*S[0])
            Q_value = select_value(output.squeeze_(0), action[0])
            with torch.no_grad():
                Q_NSval, _ = QEval(*S[-1])
            Q_NSval = Q_NSval.squeeze_(0).max(-1)[0]
            r = sum(reward)
            loss = QlossFunc(Q_value, r+Q_NSval)

            Qoptim.zero_grad()
            loss.backward()
            Qoptim.step()


class Dual(nn.Module):
    def __init__(self, in_features, out_features, bias=False):
        super().__init__()
        self.advantage = nn.Linear(in_features=in_features, out_features=out_features, bias=bias)
        self.average = nn.Linear(in_features=in_features, out_features=1, bias=bias)

    def forward(self, input):
        advantage = self.advantage(input)
        advantage -= advantage.mean()
        average = self.average(input)
        return advantage + average


class Q(nn.Module):
    def __init__(self, dec, dual):
        super().__init__()
        self.dec = dec
        self.dual = dual

    def forward(self, input, states, gru_out):
        output, states = self.dec(input, states, gru_out)
        values = self.dual(output)
        return values, states


class G(nn.Module):
    def __init__(self, voc_size, hidden_size, timesteps, on, sos_pad, num_layers=2):
        super().__init__()
        self.encoder = Encoder(voc_size, hidden_size, num_layers)
        self.decoder = Decoder(voc_size, hidden_size, timesteps, num_layers)
        self.dual = Dual(hidden_size, voc_size)
        self.QFunc = Q(self.decoder, self.dual)
        self.hidden_size = hidden_size
        self.timesteps = timesteps
        self.num_layers = num_layers
        self.on = on
        self.sos, self.pad = sos_pad

    def synchronise(self, QFunc):
        self.load_state_dict(QFunc.state_dict())
        return self


class D(nn.Module):
    def __init__(self, voc_size, hidden_size, on, num_layers=2):
        super().__init__()
        self.encoder = Encoder(voc_size, hidden_size, num_layers)
        self.score = nn.Linear(hidden_size * (num_layers + 1), 1)
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.on = on

    def forward(self, sentence):
        batch = sentence.shape[1]
        states = torch.zeros((self.num_layers, batch, self.hidden_size), device=self.on)
        gru_out, states = self.encoder(sentence, states)
        gru_out = F.relu(gru_out[-1])
        output = torch.cat([gru_out, states.transpose(0, 1).reshape(batch, -1)], dim=-1)
        return torch.sigmoid(self.score(output))


class Step:
    def __init__(self, E):
        self.E = E

    def __call__(self):
        return random.poisson(self.E) + 1


class Epsilon:
    def __init__(self, epsilon_0, decay):
        self.epsilon_0 = epsilon_0
        self.decay = decay

    def __call__(self):
        self.epsilon_0 *= self.decay
        return self.epsilon_0


def train_G(batched_data, D, GUpdate, GTarget, Goptim, GLossFunc,
            epsilon, stepFunc, storage, sReward, categorical=False):
    batch = batched_data.shape[1]
    all_steps = len(batched_data)
    current_step = 0

    # decoder of G is trained with RL
    states = torch.zeros((GUpdate.num_layers, batch, GUpdate.hidden_size), device=GUpdate.on)
    encoded, states = GUpdate.encoder(batched_data, states)

    word = torch.tensor([GUpdate.sos]*batch, device=GUpdate.on)
    pad = torch.tensor([GUpdate.pad]*batch, device=GUpdate.on)
    shortened = []

    while True:
        step = stepFunc()
        if current_step + step > all_steps:
            step = all_steps - current_step

        states_list, reward_list, action_list = [], [], []
        S = [word, states, encoded]
        states_list.append(S)

        for _ in range(step):
            action, states = take_action(GUpdate.QFunc, S, epsilon, categorical)
            S = [action, states, encoded]
            states_list.append(S)
            reward_list.append(torch.tensor([0.]*batch, device=GUpdate.on))
            action_list.append(action)
            shortened.append(action)
        word = S[0]

        current_step += step
        if current_step >= all_steps:
            action_list.append(pad)
            shortened = torch.stack(shortened, dim=0)
            realistic = D(shortened).squeeze(-1)
            short = short_reward(shortened, GUpdate.pad, sReward, GUpdate.on)
            reward_list.append(realistic+short)

            storage.save(states_list, action_list, reward_list)
            storage.optimize(GUpdate.QFunc, Goptim, GTarget.QFunc, GLossFunc, GUpdate.on)
            break

        storage.save(states_list, action_list, reward_list)
        storage.optimize(GUpdate.QFunc, Goptim, GTarget.QFunc, GLossFunc, GUpdate.on)


random.seed(0)
voc_size, hidden_size, timesteps, on = 12, 8, 6, torch.device('cpu')
GUpdate = G(voc_size, hidden_size, timesteps, on, sos_pad=(1, 0))
GTarget = copy.deepcopy(GUpdate)
Dis = D(voc_size, hidden_size, on)
Goptim = optim.Adam(GUpdate.parameters(), lr=1e-3)
storage = Storage(decay_value=0.3)
epsilon = Epsilon(0.5, 0.99)
stepFunc = Step(2)
for it in range(3):
    batched_data = torch.randint(0, voc_size, (timesteps, 4))
    train_G(batched_data, Dis, GUpdate, GTarget, Goptim, nn.MSELoss(),
            epsilon, stepFunc, storage, sReward=0.1)
    storage.refresh()
    GTarget.synchronise(GUpdate)
    print(it, len(storage.data))
