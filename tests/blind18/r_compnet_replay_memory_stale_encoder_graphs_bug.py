# Source: https://github.com/WOW5678/CompNet/issues/2
"""CompNet (CIKM 2019, medication recommendation with a DQN over a drug R-GCN): main_CompNet.py stores in the
replay `memory` the states `x = agent.new_state(f, g)` built by the diagnosis/procedure CNNs and the R-GCN, graphs
and all, and `Agent.replay` backwards a minibatch of them with `loss.backward(retain_graph=True)` before
`self.optimizier.step()`, whose parameters include the CNNs and the R-GCN. The next replay samples states built
before that step, whose graphs saved the old encoder weights: "one of the variables needed for gradient
computation has been modified by an inplace operation" (the reporter's [1, 2, 2] tensor is one of them). The
thread has no answer; the fix is to store detached states in the replay memory (an experience is data, not a
graph), which also makes `retain_graph=True` unnecessary.
Random records, a random drug-interaction table and small sizes stand in for MIMIC-III; the adjacency matrices
are dense.
"""
import collections
import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(1)
random.seed(1)
np.random.seed(1)
device = torch.device('cpu')


class CNN(nn.Module):
    def __init__(self, vocab_size, emb_size, num_channels, hidden_dim, dropout):
        super(CNN, self).__init__()
        self.embedding = nn.Embedding(embedding_dim=emb_size, num_embeddings=vocab_size)
        self.conv = nn.Sequential(
            nn.Conv1d(in_channels=emb_size, out_channels=num_channels, kernel_size=3, stride=2),
            nn.Tanh(),
            nn.Conv1d(in_channels=num_channels, out_channels=num_channels, kernel_size=3, stride=2),
            nn.Tanh(),
            nn.Conv1d(in_channels=num_channels, out_channels=num_channels, kernel_size=3, stride=2),
        )
        self.dropout = dropout
        self.out = nn.Linear(num_channels, hidden_dim, bias=True)
        nn.init.kaiming_normal_(self.out.weight)

    def forward(self, x):
        x_emb = self.embedding(x).unsqueeze(0).permute(0, 2, 1)
        x = self.conv(x_emb)
        remaining_size = x.size(dim=2)
        features = F.max_pool1d(x, remaining_size).squeeze(dim=2)
        features = F.dropout(features, p=self.dropout)
        output = self.out(features)
        return output


class GCNLayer(nn.Module):
    def __init__(self, in_size, out_size, total_rel=2, n_basis=2):
        super(GCNLayer, self).__init__()
        self.in_size, self.out_size, self.n_basis, self.total_rel = in_size, out_size, n_basis, total_rel
        self.basis_weights = nn.Parameter(torch.FloatTensor(self.n_basis, self.in_size, self.out_size))
        self.basis_coeff = nn.Parameter(torch.FloatTensor(self.total_rel, self.n_basis))
        self.register_parameter('bias', None)
        self.reset_parameters()

    def forward(self, inp, adj_mat_list):
        rel_weights = torch.einsum('ij,jmn->imn', [self.basis_coeff, self.basis_weights])
        weights = rel_weights.view(rel_weights.shape[0] * rel_weights.shape[1], rel_weights.shape[2])
        emb_acc = []
        if inp is not None:
            for mat in adj_mat_list:
                emb_acc.append(torch.mm(mat, inp))
            tmp = torch.cat(emb_acc, 1)
        else:
            tmp = torch.cat([item.to_dense() for item in adj_mat_list], 1)
        out = torch.matmul(tmp, weights)
        return out

    def reset_parameters(self):
        nn.init.xavier_uniform_(self.basis_weights.data)
        nn.init.xavier_uniform_(self.basis_coeff.data)


class RGCN(nn.Module):
    def __init__(self, layer_sizes, total_ent, dev='cpu'):
        super(RGCN, self).__init__()
        self.layer_sizes = layer_sizes
        self.node_init = None
        self.layers = nn.ModuleList()
        _l = total_ent
        for l in self.layer_sizes:
            self.layers.append(GCNLayer(_l, l))
            _l = l

    def forward(self, adj_mat_list):
        out = self.node_init
        final_rep = []
        for i, layer in enumerate(self.layers):
            if i != 0:
                out = F.relu(out)
            out = layer(out, adj_mat_list)
            final_rep.append(out)
        final_rep = torch.cat(final_rep, 1)
        final_rep = torch.sum(final_rep, 0).view(-1, final_rep.shape[1])
        return out, final_rep


class DQN(nn.Module):
    def __init__(self, state_size, action_size):
        super(DQN, self).__init__()
        self.W = nn.Parameter(torch.FloatTensor(state_size, state_size))
        nn.init.xavier_uniform_(self.W.data)
        self.U = nn.Parameter(torch.FloatTensor(state_size, state_size))
        nn.init.xavier_uniform_(self.U.data)
        self.fc1 = nn.Linear(state_size, 16)
        nn.init.xavier_uniform_(self.fc1.weight)
        self.fc2 = nn.Linear(16, action_size)
        nn.init.kaiming_normal_(self.fc2.weight)
        self.learn_step_counter = 0

    def forward(self, x_):
        x_t, h_t_1 = x_[0], x_[1]
        h_t_1 = h_t_1.to(device)
        state = torch.sigmoid(torch.mm(self.W, x_t.t()) + torch.mm(self.U, h_t_1.t()))
        fc1 = F.relu(self.fc1(state.t()))
        output = self.fc2(fc1)
        return state.t(), output


def getADJ(action, selectedAction, drug2id, ddi_df):
    """Stand-in: relation 0 links the newly chosen drug to the chosen ones, relation 1 is the DDI table."""
    n = len(drug2id)
    co = torch.zeros(n, n)
    for a in selectedAction:
        co[int(action), int(a)] = co[int(a), int(action)] = 1.0
    return [co + torch.eye(n), ddi_df]


class Agent(object):
    def __init__(self, state_size, action_size, layer_sizes):
        super(Agent, self).__init__()
        self.state_size = state_size
        self.action_size = action_size
        self.gamma = 0.9
        self.epsilon = 0.9
        self.epsilon_min = 0.05
        self.epsilon_decay = 0.995
        self.cnn_diagnosis = CNN(diagnosis_vocab + 2, EMB_SIZE, 8, EMB_SIZE, 0.5).to(device)
        self.cnn_procedure = CNN(procedure_vocab + 2, EMB_SIZE, 8, EMB_SIZE, 0.5).to(device)
        self.rgcn = RGCN(layer_sizes, drug_vocab_size, dev=device).to(device)
        self.model = DQN(state_size, action_size).to(device)
        self.target_model = DQN(state_size, action_size).to(device)
        self.model_params = list(self.cnn_diagnosis.parameters()) + list(self.cnn_procedure.parameters()) + \
            list(self.rgcn.parameters()) + list(self.model.parameters())
        self.optimizier = torch.optim.Adam(self.model_params, lr=LR, betas=(0.9, 0.999), weight_decay=5.0)
        self.loss = nn.MSELoss()
        self.update_target_model()

    def reset(self, x):
        x0 = torch.LongTensor(x[0]).to(device)
        x1 = torch.LongTensor(x[1]).to(device)
        diagnosis_f = self.cnn_diagnosis(x0)
        procedure_f = self.cnn_procedure(x1)
        f = torch.cat((diagnosis_f, procedure_f), 0)
        return f

    def act(self, x, h, selectedAction):
        if np.random.rand() < self.epsilon:
            while True:
                action = random.randrange(self.action_size)
                if action not in selectedAction:
                    return action, h
        next_h, output = self.model((x, h))
        while True:
            with torch.no_grad():
                action = torch.max(output, 1)[1]
                if action not in selectedAction:
                    return action, next_h
                else:
                    output[0][action] = -999999

    def new_state(self, f, g):
        a = nn.functional.softmax(torch.mm(f, g.t()), dim=1)
        f_ = torch.mm(a.t(), f)
        x = f_ + g
        return x

    def step(self, action, selectedAction, y):
        if action == action_size - 1:
            if len(selectedAction) == len(y) - 1:
                return 2, 0
            else:
                return -2, 0
        else:
            if int(action) in y and action not in selectedAction:
                reward = 1
            else:
                reward = -1
            adjacencies = getADJ(action, selectedAction, drug2id, ddi_df)
            _, g = self.rgcn(adjacencies)
            return reward, g

    def replay(self, BATCH_SIZE):
        if self.model.learn_step_counter % TARGET_UPDATE_ITER == 0:
            self.update_target_model()
            if self.epsilon > self.epsilon_min:
                self.epsilon *= self.epsilon_decay
        self.model.learn_step_counter += 1
        batch_idx = np.random.choice(len(memory), BATCH_SIZE)
        b_x, b_h, b_action, b_reward, b_next_x, b_next_h = [], [], [], [], [], []
        for id in batch_idx:
            b_x.append(memory[id][0])
            b_h.append(memory[id][1])
            b_action.append(memory[id][2])
            b_reward.append(memory[id][3])
            b_next_x.append(memory[id][4])
            b_next_h.append(memory[id][5])
        b_x = torch.cat(b_x, 0).to(device)
        b_h = torch.cat([item.to(device) for item in b_h], 0)
        b_reward = torch.FloatTensor(b_reward).to(device)
        b_action = torch.LongTensor([int(a) for a in b_action]).to(device)
        b_next_x = torch.cat(b_next_x, 0)
        b_next_h = torch.cat([item.to(device) for item in b_next_h], 0)

        b_action = b_action.unsqueeze(1).to(device)
        _, q_eval = self.model((b_x, b_h))
        q_eval = q_eval.gather(1, b_action)
        _, q_next = self.target_model((b_next_x, b_next_h))
        q_next = q_next.detach()

        q_target = (b_reward + GAMMA * q_next.max(1)[0]).unsqueeze(1)
        loss = self.loss(q_eval, q_target)

        self.optimizier.zero_grad()
        loss.backward(retain_graph=True)  # expect: GG103
        self.optimizier.step()
        return loss

    def update_target_model(self):
        self.target_model.load_state_dict(self.model.state_dict())


# data stand-ins for load_records / load_drugDDI
diagnosis_vocab, procedure_vocab, drug_vocab_size = 30, 20, 6
drug2id = {'drug%d' % i: i for i in range(drug_vocab_size)}
ddi_df = (torch.rand(drug_vocab_size, drug_vocab_size) < 0.3).float()
X_train = [(np.random.randint(1, diagnosis_vocab, 16), np.random.randint(1, procedure_vocab, 16)) for _ in range(8)]
Y_train = [list(np.random.randint(0, drug_vocab_size - 1, 3)) for _ in range(8)]

LR = 1e-3
EMB_SIZE = 8
Layer_sizes = [4, 4]
state_size = EMB_SIZE
action_size = drug_vocab_size
BATCH_SIZE = 4
EPISODES = 2
TARGET_UPDATE_ITER = 10
GAMMA = 1
memory = collections.deque(maxlen=1000)
init_adj = [torch.eye(drug_vocab_size), ddi_df]

agent = Agent(state_size, action_size, layer_sizes=Layer_sizes)
_, init_g = agent.rgcn(init_adj)
for e in range(EPISODES):
    epochLoss = []
    for x, y in zip(X_train, Y_train):
        g = init_g
        sampleReward = 0
        y = set(int(v) for v in y)
        f = agent.reset(x)
        h = torch.FloatTensor(np.zeros((1, state_size)))
        selectedAction = []
        for step in range(len(y)):
            x = agent.new_state(f, g)
            if step == len(y) - 1:
                selectedAction.append(action_size - 1)
                reward = 1
                sampleReward += int(reward)
                memory.append((x, h, action_size - 1, reward, x, h))
            else:
                action, next_h = agent.act(x, h, selectedAction)
                if action == action_size - 1 and step == 0:
                    while True:
                        action, next_h = agent.act(x, h, selectedAction)
                        if action != action_size - 1:
                            break
                reward, _ = agent.step(action, selectedAction, y)
                if type(_) != int:
                    g = _
                    selectedAction.append(int(action))
                    sampleReward += int(reward)
                    next_x = agent.new_state(f, g)
                    memory.append((x, h, action, reward, next_x, next_h))
                    x = next_x
                    h = next_h
                else:
                    selectedAction.append(int(action))
                    sampleReward += int(reward)
                    memory.append((x, h, action, reward, x, h))
        if len(memory) > BATCH_SIZE:
            epochLoss.append(float(agent.replay(BATCH_SIZE)))
    print('epoch:%d loss %.4f' % (e, sum(epochLoss) / max(len(epochLoss), 1)))
