# Source: https://github.com/tamps2gcnets/TAMP_S2GCNets/issues/1
"""TAMP-S2GCNets (time-aware multipersistence spatio-supra graph convolution) on PeMSD8: each graph
convolution builds its adaptive adjacency as `initial_S = F.relu(E @ E.T)` and then writes the
diagonal in place, `initial_S.fill_diagonal_(0)` and `initial_S.fill_diagonal_(stay_cost)`. ReLU
saved its output for the backward, so `loss.backward()` in the trainer raises "one of the variables
needed for gradient computation has been modified by an inplace operation: [torch.cuda.FloatTensor
[170, 170]], which is output 0 of ReluBackward0, is at version 2; expected version 0". The reporter
only got it to run by installing the authors' torch version; the `_ok` twin sets the diagonal out
of place. The GRU encoder, the CNNs over multipersistence images and the trainer follow the
repository at small sizes (6 nodes instead of 170); traffic windows and persistence images are random.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

# ----------------------------- DNN.py -----------------------------


class MAXCNN(nn.Module):
    def __init__(self, dim_in, dim_out):
        super(MAXCNN, self).__init__()
        self.dim_out = dim_out
        self.features = nn.Sequential(
            nn.Conv2d(dim_in, 8, kernel_size=1, stride=2),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=1, stride=2),
            nn.Conv2d(8, dim_out, kernel_size=1, stride=2),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=1, stride=2),
        )
        self.maxpool = nn.MaxPool2d(3, 3)

    def forward(self, MPG):
        feature = self.features(MPG)
        feature = self.maxpool(feature)
        feature = feature.view(-1, self.dim_out)
        return feature


class MEANCNN(nn.Module):
    def __init__(self, dim_in, dim_out):
        super(MEANCNN, self).__init__()
        self.dim_out = dim_out
        self.features = nn.Sequential(
            nn.Conv2d(dim_in, 8, kernel_size=1, stride=2),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=1, stride=2),
            nn.Conv2d(8, dim_out, kernel_size=1, stride=2),
            nn.ReLU(inplace=True),
            nn.MaxPool2d(kernel_size=1, stride=2),
        )
        self.maxpool = nn.AvgPool2d(3, 3)

    def forward(self, MPG):
        feature = self.features(MPG)
        feature = self.maxpool(feature)
        feature = feature.view(-1, self.dim_out)
        return feature

# ----------------------------- TAMPGCN.py -----------------------------


class TAMPSTGCNCNN(nn.Module):
    def __init__(self, dim_in, dim_out, window_len, link_len, embed_dim):
        super(TAMPSTGCNCNN, self).__init__()
        self.link_len = link_len
        self.weights_pool = nn.Parameter(torch.FloatTensor(embed_dim, link_len, dim_in, int(3/4 * dim_out)))
        if (dim_in - 1) % 16 == 0:
            self.window_weights_supra = nn.Parameter(torch.FloatTensor(embed_dim, 1, int(1/8 * dim_out)))
        else:
            self.window_weights_supra = nn.Parameter(torch.FloatTensor(embed_dim, int(dim_in / 2), int(1/8 * dim_out)))
        if (dim_in - 1) % 16 == 0:
            self.window_weights_temporal = nn.Parameter(torch.FloatTensor(embed_dim, 1, int(1/8 * dim_out)))
        else:
            self.window_weights_temporal = nn.Parameter(torch.FloatTensor(embed_dim, int(dim_in / 2), int(1/8 * dim_out)))
        self.bias_pool = nn.Parameter(torch.FloatTensor(embed_dim, dim_out))
        self.T = nn.Parameter(torch.FloatTensor(window_len))
        self.cnn_mean = MEANCNN(window_len, int(1 / 16 * dim_out))
        self.cnn_max = MAXCNN(window_len, int(1 / 16 * dim_out))

    def forward(self, x, x_window, node_embeddings, fixed_adj, adj, stay_cost, jump_cost, MPG):
        #S1: Laplacian construction
        node_num = node_embeddings.shape[0]
        initial_S = F.relu(torch.mm(node_embeddings, node_embeddings.transpose(0, 1)))  # (N, N)
        initial_S.fill_diagonal_(0)
        initial_S.fill_diagonal_(stay_cost)  # probability to stay at the same layer

        if fixed_adj == 1:
            S = torch.FloatTensor(np.array([adj[i, j] * np.exp(initial_S[i, j])
                                            for i in range(node_num) for j in range(node_num)]).reshape(node_num, node_num))
        else:
            S = F.softmax(initial_S, dim=1)
        S = (S/torch.sum(S, dim=1)).to(node_embeddings.device)
        support_set = [torch.eye(node_num).to(S.device), S]

        #S2: Laplacianlink
        for k in range(2, self.link_len):
            support_set.append(torch.mm(S, support_set[k-1]))
        supports = torch.stack(support_set, dim=0)

        #S3: supra-Laplacian (N*T, N*T) over multiplex network
        T = x_window.size(1)
        Bootstrap_num = np.random.choice(range(T), size=(3,))
        Bootstrap_num.sort()
        supra_laplacian = torch.zeros(size=(node_num * Bootstrap_num.shape[0], node_num * Bootstrap_num.shape[0])).to(S.device)
        inter_diagonal_matrix = np.zeros(shape=(node_num, node_num), dtype=np.float32)
        np.fill_diagonal(inter_diagonal_matrix, jump_cost)
        inter_diagonal_matrix = torch.FloatTensor(inter_diagonal_matrix).to(S.device)
        for i in range(Bootstrap_num.shape[0]):
            for j in range(Bootstrap_num.shape[0]):
                if i == j:
                    supra_laplacian[node_num * i: node_num * (i + 1), node_num * i: node_num * (i + 1)] = S
                elif j > i:
                    supra_laplacian[node_num * i: node_num * (i + 1), node_num * j: node_num * (j + 1)] = inter_diagonal_matrix

        #S4: spatial graph convolution
        weights = torch.einsum('nd,dkio->nkio', node_embeddings, self.weights_pool)
        bias = torch.matmul(node_embeddings, self.bias_pool)
        x_s = torch.einsum("knm,bmc->bknc", supports, x)
        x_s = x_s.permute(0, 2, 1, 3)
        x_sconv = torch.einsum('bnki,nkio->bno', x_s, weights)

        #S5: supra graph convolution
        weights_window_supra = torch.einsum('nd,dio->nio', node_embeddings, self.window_weights_supra)
        x_window_ = x_window[:, Bootstrap_num, :, :]
        _x_window_ = x_window_.view(x_window_.size(0), -1, x_window_.size(3))
        x_w_s = torch.einsum('bmi,mn->bni', _x_window_, supra_laplacian)
        x_w_s = x_w_s.view(x_w_s.size(0), Bootstrap_num.shape[0], node_num, -1)
        x_wconv_s = torch.einsum('bfni,nio->bfno', x_w_s, weights_window_supra)
        x_wconv_s = torch.mean(x_wconv_s, dim=1)

        # S6: MLP
        weights_window_temporal = torch.einsum('nd,dio->nio', node_embeddings, self.window_weights_temporal)
        x_w_t = torch.einsum('btni,nio->btno', x_window, weights_window_temporal)
        x_w_t = x_w_t.permute(0, 2, 3, 1)
        x_wconv_t = torch.matmul(x_w_t, self.T)

        #S7: mutli-persistence representation learning
        topo_mean_cnn = self.cnn_mean(MPG)
        topo_max_cnn = self.cnn_max(MPG)
        topo_cnn = torch.cat([topo_mean_cnn, topo_max_cnn], dim=1)

        x_twconv_s = torch.einsum('bno,bo->bno', x_wconv_s, topo_cnn)

        #S8: combination operation
        x_tswconv = torch.cat([x_sconv, x_twconv_s, x_wconv_t], dim=-1) + bias
        return x_tswconv

# ----------------------------- TAMPGCNCELL.py -----------------------------


class TAMPGCRNCNNCell(nn.Module):
    def __init__(self, node_num, dim_in, dim_out, window_len, link_len, embed_dim):
        super(TAMPGCRNCNNCell, self).__init__()
        self.node_num = node_num
        self.hidden_dim = dim_out
        self.gate = TAMPSTGCNCNN(dim_in+self.hidden_dim, 2*dim_out, window_len, link_len, embed_dim)
        self.update = TAMPSTGCNCNN(dim_in+self.hidden_dim, dim_out, window_len, link_len, embed_dim)

    def forward(self, x, state, x_full, node_embeddings, fixed_adj, adj, stay_cost, jump_cost, MPG):
        state = state.to(x.device)
        input_and_state = torch.cat((x, state), dim=-1)
        z_r = torch.sigmoid(self.gate(input_and_state, x_full, node_embeddings, fixed_adj, adj, stay_cost, jump_cost, MPG))
        z, r = torch.split(z_r, self.hidden_dim, dim=-1)
        candidate = torch.cat((x, z*state), dim=-1)
        hc = torch.tanh(self.update(candidate, x_full, node_embeddings, fixed_adj, adj, stay_cost, jump_cost, MPG))
        h = r*state + (1-r)*hc
        return h

    def init_hidden_state(self, batch_size):
        return torch.zeros(batch_size, self.node_num, self.hidden_dim)

# ----------------------------- TAMPGCNETs.py -----------------------------


class TAMPGCRNCNN(nn.Module):
    def __init__(self, args):
        super(TAMPGCRNCNN, self).__init__()
        self.num_node = args.num_nodes
        self.input_dim = args.input_dim
        self.hidden_dim = args.rnn_units
        self.output_dim = args.output_dim
        self.horizon = args.horizon
        self.node_embeddings = nn.Parameter(torch.randn(self.num_node, args.embed_dim), requires_grad=True)
        self.cell = TAMPGCRNCNNCell(args.num_nodes, args.input_dim, args.rnn_units, args.window_len, args.link_len, args.embed_dim)
        self.end_conv = nn.Conv2d(1, args.horizon * self.output_dim, kernel_size=(1, self.hidden_dim), bias=True)
        self.fixed_adj, self.adj = args.fixed_adj, None
        self.stay_cost, self.jump_cost = args.stay_cost, args.jump_cost

    def forward(self, source, x_window, MPG):
        state = self.cell.init_hidden_state(source.shape[0])
        for t in range(source.shape[1]):
            state = self.cell(source[:, t, :, :], state, x_window, self.node_embeddings, self.fixed_adj, self.adj,
                              self.stay_cost, self.jump_cost, MPG)
        output = self.end_conv(state.unsqueeze(1))  # B, T*C, N, 1
        output = output.squeeze(-1).reshape(-1, self.horizon, self.output_dim, self.num_node)
        return output.permute(0, 1, 3, 2)

# ----------------------------- Trainer.py / Run_PeMSD8_model.py -----------------------------


class Trainer(object):
    def __init__(self, model, loss, optimizer, train_loader, args):
        self.model, self.loss, self.optimizer = model, loss, optimizer
        self.train_loader, self.args = train_loader, args

    def train_epoch(self, epoch):
        self.model.train()
        total_loss = 0
        for batch_idx, (data, target, x_window, MPG) in enumerate(self.train_loader):
            self.optimizer.zero_grad()
            output = self.model(data, x_window, MPG)
            loss = self.loss(output, target)
            loss.backward()  # expect: GG103
            if self.args.grad_norm:
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.args.max_grad_norm)
            self.optimizer.step()
            total_loss += loss.item()
        print('Train Epoch {}: averaged Loss: {:.6f}'.format(epoch, total_loss / len(self.train_loader)))

    def train(self):
        for epoch in range(1, self.args.epochs + 1):
            self.train_epoch(epoch)


class Args:
    num_nodes, input_dim, output_dim, rnn_units, embed_dim = 6, 1, 1, 16, 2
    horizon, lag, window_len, link_len = 3, 4, 4, 2
    fixed_adj, stay_cost, jump_cost = 0, 0.2, 0.8
    lr_init, epochs, grad_norm, max_grad_norm, batch_size = 3e-3, 1, False, 5, 2


args = Args()
torch.manual_seed(10)
np.random.seed(10)
model = TAMPGCRNCNN(args)
for p in model.parameters():
    if p.dim() > 1:
        nn.init.xavier_uniform_(p)
    else:
        nn.init.uniform_(p)

train_loader = [(torch.randn(args.batch_size, args.lag, args.num_nodes, args.input_dim),
                 torch.randn(args.batch_size, args.horizon, args.num_nodes, args.output_dim),
                 torch.randn(args.batch_size, args.window_len, args.num_nodes, args.input_dim),
                 torch.rand(args.batch_size, args.window_len, 48, 48)) for _ in range(2)]
loss = torch.nn.L1Loss()
optimizer = torch.optim.Adam(params=model.parameters(), lr=args.lr_init, eps=1.0e-8, weight_decay=0, amsgrad=False)
trainer = Trainer(model, loss, optimizer, train_loader, args)
trainer.train()
