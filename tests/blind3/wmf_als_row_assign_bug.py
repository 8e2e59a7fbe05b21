# Source: https://github.com/graytowne/revisit_adv_rec/issues/3
"""revisit_adv_rec's weighted matrix factorisation surrogate trained with alternating least squares
("sur_wmf_als"): WMFTrainer.train_als solves each user's and item's least-squares system and writes
the row back with `model.P[user] = new_p_u.t()`, an in-place copy into a view of the nn.Parameter
P, a leaf that requires grad, with grad mode on. Recent PyTorch raises "a view of a leaf Variable
that requires grad is being used in an in-place operation" on the first user. The model and trainer
are the repository's; scipy's sparse rows become dense numpy rows and the sparse diagonal
matrices dense ones, on a random 6-user x 5-item click matrix."""
import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim


class Bunch(dict):
    def __getattr__(self, name):
        return self[name]


def sparse2tensor(row):
    return torch.FloatTensor(np.asarray(row, dtype=np.float32)).unsqueeze(0)


def _array2sparsediag(x):
    return torch.diag(torch.FloatTensor(x))


class WeightedMF(nn.Module):
    def __init__(self, n_users, n_items, model_args):
        super(WeightedMF, self).__init__()

        hidden_dims = model_args.hidden_dims
        if len(hidden_dims) > 1:
            raise ValueError("WMF can only have one latent dimension.")

        self.n_users = n_users
        self.n_items = n_items
        self.dim = hidden_dims[0]

        self.Q = nn.Parameter(
            torch.zeros([self.n_items, self.dim]).normal_(mean=0, std=0.1))
        self.P = nn.Parameter(
            torch.zeros([self.n_users, self.dim]).normal_(mean=0, std=0.1))
        self.params = nn.ParameterList([self.Q, self.P])

    def forward(self, user_id=None, item_id=None):
        if user_id is None and item_id is None:
            return torch.mm(self.P, self.Q.t())
        if user_id is not None:
            return torch.mm(self.P[[user_id]], self.Q.t())
        if item_id is not None:
            return torch.mm(self.P, self.Q[[item_id]].t())


class WMFTrainer:
    def __init__(self, n_users, n_items, args):
        self.args = args
        self.device = torch.device("cpu")
        self.n_users = n_users
        self.n_items = n_items

    def _initialize(self):
        model_args = Bunch(self.args.model)
        if "optim_method" not in model_args:
            model_args["optim_method"] = "sgd"
        self.net = WeightedMF(
            n_users=self.n_users, n_items=self.n_items,
            model_args=model_args).to(self.device)

        self.optimizer = optim.Adam(self.net.parameters(), lr=self.args.lr,
                                    weight_decay=self.args.l2)

        self.optim_method = model_args.optim_method
        self.weight_alpha = self.args.model["weight_alpha"]
        self.dim = self.net.dim

    def train_als(self, data):
        model = self.net
        P = model.P.detach()
        Q = model.Q.detach()

        weight_alpha = self.weight_alpha - 1
        # Update P
        lamda_eye = torch.eye(self.dim).to(self.device) * self.args.l2
        # residual = Q^tQ + lambda*I
        residual = torch.mm(Q.t(), Q) + lamda_eye
        for user, batch_data in enumerate(data):
            # x_u: N x 1
            x_u = sparse2tensor(batch_data).to(self.device).t()
            # Cu = diagMat(alpha * rating + 1)
            cu = batch_data * weight_alpha + 1
            Cu = _array2sparsediag(cu).to(self.device)
            Cu_minusI = _array2sparsediag(cu - 1).to(self.device)
            lhs = torch.mm(Q.t(), Cu_minusI.mm(Q)) + residual
            rhs = torch.mm(Q.t(), Cu.mm(x_u))

            new_p_u = torch.mm(lhs.inverse(), rhs)
            model.P[user] = new_p_u.t()  # expect: GG108

        # Update Q
        data = data.transpose()
        residual = torch.mm(P.t(), P) + lamda_eye
        for item, batch_data in enumerate(data):
            x_v = sparse2tensor(batch_data).to(self.device).t()
            cv = batch_data * weight_alpha + 1
            Cv = _array2sparsediag(cv).to(self.device)
            Cv_minusI = _array2sparsediag(cv - 1).to(self.device)
            lhs = torch.mm(P.t(), Cv_minusI.mm(P)) + residual
            rhs = torch.mm(P.t(), Cv.mm(x_v))

            new_q_v = torch.mm(lhs.inverse(), rhs)
            model.Q[item] = new_q_v.t()

        return 0


rng = np.random.RandomState(0)
train_data = (rng.rand(6, 5) > 0.6).astype(np.float32)
args = Bunch(model={"hidden_dims": [3], "optim_method": "als", "weight_alpha": 20},
             lr=1e-3, l2=1e-2)
trainer = WMFTrainer(n_users=6, n_items=5, args=args)
trainer._initialize()
for epoch in range(2):
    trainer.train_als(train_data)
    print(epoch, trainer.net().detach().numpy().round(2)[0])
