# Source: https://github.com/kfzyqin/Implementation-MolGAN-PyTorch/issues/3
"""Implementation-MolGAN-PyTorch's train_or_valid() with the order the repository adopted after
the issues on this error: both backwards first (train_step_G.backward(retain_graph=True), then
train_step_V.backward()), then the generator's and the value network's steps, so no backward
walks a forward whose weights a step has already changed. (As in the repository, G's step then
also follows loss_V's gradient through the fakes and V's step loss_RL's; see the notes.)"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from collections import defaultdict


class Generator(nn.Module):
    def __init__(self, conv_dims, z_dim, vertexes, edges, nodes, dropout_rate):
        super(Generator, self).__init__()
        self.vertexes, self.edges, self.nodes = vertexes, edges, nodes
        layers = []
        for c0, c1 in zip([z_dim] + conv_dims[:-1], conv_dims):
            layers += [nn.Linear(c0, c1), nn.Tanh(), nn.Dropout(p=dropout_rate)]
        self.layers = nn.Sequential(*layers)
        self.edges_layer = nn.Linear(conv_dims[-1], edges * vertexes * vertexes)
        self.nodes_layer = nn.Linear(conv_dims[-1], vertexes * nodes)
        self.dropoout = nn.Dropout(p=dropout_rate)

    def forward(self, x):
        output = self.layers(x)
        edges_logits = self.edges_layer(output).view(-1, self.edges, self.vertexes, self.vertexes)
        edges_logits = (edges_logits + edges_logits.permute(0, 1, 3, 2)) / 2
        edges_logits = self.dropoout(edges_logits.permute(0, 2, 3, 1))
        nodes_logits = self.nodes_layer(output)
        nodes_logits = self.dropoout(nodes_logits.view(-1, self.vertexes, self.nodes))
        return edges_logits, nodes_logits


class GraphConvolution(nn.Module):
    def __init__(self, in_features, out_feature_list, b_dim):
        super(GraphConvolution, self).__init__()
        self.out_feature_list = out_feature_list
        self.linear1 = nn.Linear(in_features, out_feature_list[0])
        self.linear2 = nn.Linear(out_feature_list[0], out_feature_list[1])

    def forward(self, adj, hidden, node, activation=None):
        annotations = torch.cat((hidden, node), -1) if hidden is not None else node
        adj = adj[:, :, :, 1:].permute(0, 3, 1, 2)  # drop the "no bond" channel
        hidden1 = torch.stack([self.linear1(annotations) for _ in range(adj.size(1))], 1)
        hidden1 = torch.matmul(adj, hidden1).sum(1) + self.linear1(annotations)
        hidden1 = activation(hidden1) if activation is not None else hidden1
        hidden2 = torch.stack([self.linear2(hidden1) for _ in range(adj.size(1))], 1)
        hidden2 = torch.matmul(adj, hidden2).sum(1) + self.linear2(hidden1)
        return activation(hidden2) if activation is not None else hidden2


class Discriminator(nn.Module):
    """Graph convolutions, a sum aggregation and a linear head (D and the value network V)."""

    def __init__(self, conv_dim, m_dim, b_dim):
        super(Discriminator, self).__init__()
        graph_conv_dim, aux_dim, linear_dim = conv_dim
        self.gcn_layer = GraphConvolution(m_dim, graph_conv_dim, b_dim)
        self.agg_layer = nn.Linear(graph_conv_dim[-1] + m_dim, aux_dim)
        self.linear_layer = nn.Sequential(nn.Linear(aux_dim, linear_dim[0]), nn.Tanh())
        self.output_layer = nn.Linear(linear_dim[-1], 1)

    def forward(self, adj, hidden, node, activatation=None):
        h = self.gcn_layer(adj, hidden, node, torch.tanh)
        annotations = torch.cat((h, node), -1)
        h = torch.tanh(self.agg_layer(annotations).sum(1))
        h = self.linear_layer(h)
        output = self.output_layer(h)
        output = activatation(output) if activatation is not None else output
        return output, h


class Solver(object):
    def __init__(self):
        self.m_dim, self.b_dim, self.vertexes = 5, 4, 6
        self.z_dim, self.batch_size, self.num_steps = 8, 4, 3
        self.la, self.la_gp, self.n_critic = 0.5, 10.0, 1
        self.post_method = 'softmax'
        self.device = torch.device('cpu')
        self.G = Generator([16, 32], self.z_dim, self.vertexes, self.b_dim, self.m_dim, 0.0)
        self.D = Discriminator([[16, 8], 16, [16]], self.m_dim, self.b_dim)
        self.V = Discriminator([[16, 8], 16, [16]], self.m_dim, self.b_dim)
        self.g_optimizer = torch.optim.Adam(self.G.parameters(), 1e-3, [0.5, 0.999])
        self.d_optimizer = torch.optim.Adam(self.D.parameters(), 1e-3, [0.5, 0.999])
        self.v_optimizer = torch.optim.Adam(self.V.parameters(), 1e-3, [0.5, 0.999])

    def next_train_batch(self, batch_size):
        a = np.random.randint(0, self.b_dim, (batch_size, self.vertexes, self.vertexes))
        a = np.triu(a, 1) + np.transpose(np.triu(a, 1), (0, 2, 1))
        x = np.random.randint(0, self.m_dim, (batch_size, self.vertexes))
        return a, x

    def sample_z(self, batch_size):
        return np.random.normal(0, 1, size=(batch_size, self.z_dim))

    def reward(self, adj, nodes):
        """Stand-in for RDKit's scores: the share of bonded atom pairs, from the hard graph."""
        return (adj > 0).mean(axis=(1, 2), keepdims=False)[:, None].astype(np.float32)

    def label2onehot(self, labels, dim):
        out = torch.zeros(list(labels.size()) + [dim]).to(self.device)
        out.scatter_(len(out.size()) - 1, labels.unsqueeze(-1), 1.)
        return out

    def postprocess(self, inputs, method, temperature=1.):
        def listify(x):
            return x if type(x) == list or type(x) == tuple else [x]

        softmax = [F.softmax(e_logits / temperature, -1) for e_logits in listify(inputs)]
        return [delistify for delistify in softmax]

    def get_reward(self, n_hat, e_hat, method):
        (edges_hard, nodes_hard) = self.postprocess((e_hat, n_hat), method)
        edges_hard, nodes_hard = torch.max(edges_hard, -1)[1], torch.max(nodes_hard, -1)[1]
        reward = torch.from_numpy(self.reward(edges_hard.data.cpu().numpy(), nodes_hard.data.cpu().numpy()))
        return reward.to(self.device)

    def gradient_penalty(self, y, x):
        weight = torch.ones(y.size()).to(self.device)
        dydx = torch.autograd.grad(outputs=y, inputs=x, grad_outputs=weight,
                                   retain_graph=True, create_graph=True, only_inputs=True)[0]
        dydx = dydx.view(dydx.size(0), -1)
        dydx_l2norm = torch.sqrt(torch.sum(dydx ** 2, dim=1))
        return torch.mean((dydx_l2norm - 1) ** 2)

    def reset_grad(self):
        self.g_optimizer.zero_grad()
        self.d_optimizer.zero_grad()
        self.v_optimizer.zero_grad()

    def train_or_valid(self, epoch_i, train_val_test='val'):
        cur_la = 0 if epoch_i < 0 else self.la
        losses = defaultdict(list)
        for a_step in range(self.num_steps):
            a, x = self.next_train_batch(self.batch_size)
            z = self.sample_z(self.batch_size)

            a = torch.from_numpy(a).to(self.device).long()  # Adjacency.
            x = torch.from_numpy(x).to(self.device).long()  # Nodes.
            a_tensor = self.label2onehot(a, self.b_dim)
            x_tensor = self.label2onehot(x, self.m_dim)
            z = torch.from_numpy(z).to(self.device).float()
            cur_step = self.num_steps * epoch_i + a_step

            # 2. Train the discriminator
            logits_real, features_real = self.D(a_tensor, None, x_tensor)
            edges_logits, nodes_logits = self.G(z)
            (edges_hat, nodes_hat) = self.postprocess((edges_logits, nodes_logits), self.post_method)
            logits_fake, features_fake = self.D(edges_hat, None, nodes_hat)

            eps = torch.rand(logits_real.size(0), 1, 1, 1).to(self.device)
            x_int0 = (eps * a_tensor + (1. - eps) * edges_hat).requires_grad_(True)
            x_int1 = (eps.squeeze(-1) * x_tensor + (1. - eps.squeeze(-1)) * nodes_hat).requires_grad_(True)
            grad0, grad1 = self.D(x_int0, None, x_int1)
            grad_penalty = self.gradient_penalty(grad0, x_int0) + self.gradient_penalty(grad1, x_int1)

            d_loss_real = torch.mean(logits_real)
            d_loss_fake = torch.mean(logits_fake)
            loss_D = -d_loss_real + d_loss_fake + self.la_gp * grad_penalty
            losses['l_D'].append(loss_D.item())

            if train_val_test == 'train' and cur_step % self.n_critic != 0 and cur_la > 0:
                self.reset_grad()
                loss_D.backward()
                self.d_optimizer.step()

            # 3. Train the generator
            edges_logits, nodes_logits = self.G(z)
            (edges_hat, nodes_hat) = self.postprocess((edges_logits, nodes_logits), self.post_method)
            logits_fake, features_fake = self.D(edges_hat, None, nodes_hat)

            # Value losses
            value_logit_real, _ = self.V(a_tensor, None, x_tensor, torch.sigmoid)
            value_logit_fake, _ = self.V(edges_hat, None, nodes_hat, torch.sigmoid)

            reward_r = torch.from_numpy(self.reward(a.numpy(), x.numpy())).to(self.device)
            reward_f = self.get_reward(nodes_hat, edges_hat, self.post_method)

            loss_G = -logits_fake
            loss_V = torch.abs(value_logit_real - reward_r) + torch.abs(value_logit_fake - reward_f)
            loss_RL = -value_logit_fake

            loss_G = torch.mean(loss_G)
            loss_V = torch.mean(loss_V)
            loss_RL = torch.mean(loss_RL)
            losses['l_G'].append(loss_G.item())
            losses['l_RL'].append(loss_RL.item())
            losses['l_V'].append(loss_V.item())

            alpha = torch.abs(loss_G.detach() / loss_RL.detach()).detach()
            train_step_G = cur_la * loss_G + (1 - cur_la) * alpha * loss_RL

            train_step_V = loss_V

            if train_val_test == 'train':
                self.reset_grad()

                # Optimise generator and value network.
                if cur_step % self.n_critic == 0:
                    train_step_G.backward(retain_graph=True)
                    train_step_V.backward()
                    self.g_optimizer.step()
                    self.v_optimizer.step()
        return {k: np.mean(v) for k, v in losses.items()}


np.random.seed(0)
solver = Solver()
for i in range(2):
    print(i, solver.train_or_valid(epoch_i=i, train_val_test='train'))
