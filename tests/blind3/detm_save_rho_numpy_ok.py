# Source: https://github.com/adjidieng/DETM/pull/11
"""DETM's main.py with the PR's fix: the saved parameter is detached before the conversion,
`rho = model.rho.weight.detach().cpu().numpy()` (under the PyTorch of the report, torch.no_grad()
did not make numpy() accept a parameter; torch 2.13 runs both versions clean)."""
import copy

import torch
import torch.nn.functional as F
from torch import nn


class Args:
    num_topics, num_times, vocab_size, rho_size = 3, 4, 12, 5
    train_embeddings = 1
    lr, epochs, mode = 0.01, 4, 'train'


args = Args()


class DETM(nn.Module):
    def __init__(self, args):
        super(DETM, self).__init__()
        self.num_topics = args.num_topics
        self.num_times = args.num_times
        self.rho_size = args.rho_size
        self.train_embeddings = args.train_embeddings
        ## define the word embedding matrix \rho
        self.rho = nn.Linear(args.rho_size, args.vocab_size, bias=False)
        ## variational parameters for the topic embeddings over time (alpha) ... alpha is K x T x L
        self.mu_q_alpha = nn.Parameter(torch.randn(args.num_topics, args.num_times, args.rho_size))
        self.theta_logits = nn.Parameter(torch.zeros(args.num_topics))

    def get_beta(self, alpha):
        """Returns the topic matrix \beta of shape K x T x V"""
        logit = self.rho(alpha.view(alpha.size(0)*alpha.size(1), self.rho_size))
        logit = logit.view(alpha.size(0), alpha.size(1), -1)
        beta = F.softmax(logit, dim=-1)
        return beta

    def forward(self, bows, times):
        beta = self.get_beta(self.mu_q_alpha)[:, times, :]  # K x D x V
        theta = F.softmax(self.theta_logits, dim=0)
        word_dist = torch.einsum('k,kdv->dv', theta, beta)
        return -(bows * torch.log(word_dist + 1e-6)).sum(1).mean()


def get_completion_ppl(model, bows, times):
    with torch.no_grad():
        return torch.exp(model(bows, times) / bows.sum(1).mean()).item()


train_bows = torch.randint(0, 3, (16, args.vocab_size)).float()
train_times = torch.randint(0, args.num_times, (16,))
model = DETM(args)
optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
saved = {}

if args.mode == 'train':
    best_val_ppl = 1e9
    for epoch in range(1, args.epochs):
        optimizer.zero_grad()
        loss = model(train_bows, train_times)
        loss.backward()
        optimizer.step()
        val_ppl = get_completion_ppl(model, train_bows, train_times)
        print('val_ppl: ', val_ppl)
        if val_ppl < best_val_ppl:
            ckpt = copy.deepcopy(model)
            best_val_ppl = val_ppl
    model = ckpt
    model.eval()
    with torch.no_grad():
        print('saving topic matrix beta...')
        alpha = model.mu_q_alpha
        beta = model.get_beta(alpha).cpu().numpy()
        saved['beta'] = beta
        if args.train_embeddings:
            print('saving word embedding matrix rho...')
            rho = model.rho.weight.detach().cpu().numpy()
            saved['rho'] = rho
        print('computing validation perplexity...')
        val_ppl = get_completion_ppl(model, train_bows, train_times)
print(sorted(saved), val_ppl)
