# Source: https://github.com/BierOne/bottom-up-attention-vqa/issues/6
"""Bottom-up attention VQA (BierOne's port): SimpleClassifier's main branch is
Linear -> ReLU -> Dropout(inplace=True) -> Linear, so in training the dropout overwrites the ReLU's
output, which the ReLU saved for its backward ("output 0 of ReluBackward0 ... is at version 1");
the fix in the thread: nn.Dropout(dropout, inplace=False)."""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils import weight_norm


class FCNet(nn.Module):
    """Simple class for multi-layer non-linear fully connect network"""
    def __init__(self, dims, dropout=0.0, norm=True):
        super().__init__()
        self.num_layers = len(dims) - 1
        self.drop = dropout
        self.norm = norm
        self.main = nn.Sequential(*self._init_layers(dims))

    def _init_layers(self, dims):
        layers = []
        for i in range(self.num_layers):
            in_dim, out_dim = dims[i], dims[i + 1]
            if self.norm:
                layers.append(weight_norm(nn.Linear(in_dim, out_dim), dim=None))
            else:
                layers.append(nn.Linear(in_dim, out_dim))
            layers.append(nn.ReLU())
        return layers

    def forward(self, x):
        return self.main(x)


class SimpleClassifier(nn.Module):
    def __init__(self, in_dim, hid_dim, out_dim, dropout=0.0):
        super().__init__()
        self.q_net = FCNet([in_dim[0], hid_dim[0]], dropout)
        self.v_net = FCNet([in_dim[1], hid_dim[0]], dropout)
        self.main = nn.Sequential(
            nn.Linear(hid_dim[0], hid_dim[1]),
            nn.ReLU(),
            nn.Dropout(dropout, inplace=True),
            nn.Linear(hid_dim[1], out_dim)
        )

    def forward(self, q_emb, v_emb):
        joint_repr = self.q_net(q_emb) * self.v_net(v_emb)
        logits = self.main(joint_repr)
        return logits


class Attention(nn.Module):
    def __init__(self, v_dim, q_dim, hid_dim):
        super().__init__()
        self.v_proj = FCNet([v_dim, hid_dim])
        self.q_proj = FCNet([q_dim, hid_dim])
        self.linear = weight_norm(nn.Linear(hid_dim, 1), dim=None)

    def forward(self, v, q):
        v_proj = self.v_proj(v)
        q_proj = self.q_proj(q).unsqueeze(1)
        logits = self.linear(v_proj * q_proj)
        return F.softmax(logits, 1)


class BaseModel(nn.Module):
    def __init__(self, ntoken, v_dim, num_hid, num_ans):
        super().__init__()
        self.w_emb = nn.Embedding(ntoken, 8)
        self.q_emb = nn.GRU(8, num_hid, batch_first=True)
        self.v_att = Attention(v_dim, num_hid, num_hid)
        self.classifier = SimpleClassifier([num_hid, v_dim], [num_hid, 2 * num_hid], num_ans, 0.5)

    def forward(self, v, q):
        w_emb = self.w_emb(q)
        _, q_emb = self.q_emb(w_emb)
        q_emb = q_emb.squeeze(0)
        att = self.v_att(v, q_emb)
        v_emb = (att * v).sum(1)
        return self.classifier(q_emb, v_emb)


def instance_bce_with_logits(logits, labels):
    loss = F.binary_cross_entropy_with_logits(logits, labels)
    return loss * labels.size(1)


def train(model, train_loader, num_epochs):
    optim = torch.optim.Adamax(model.parameters())
    for epoch in range(num_epochs):
        model.train()
        for v, q, a in train_loader:
            pred = model(v, q)
            loss = instance_bce_with_logits(pred, a)
            loss.backward()  # expect: GG103
            nn.utils.clip_grad_norm_(model.parameters(), 0.25)
            optim.step()
            optim.zero_grad()


model = BaseModel(ntoken=20, v_dim=12, num_hid=16, num_ans=5)
loader = [(torch.randn(4, 6, 12), torch.randint(0, 20, (4, 7)), torch.rand(4, 5)) for _ in range(2)]
train(model, loader, num_epochs=1)
