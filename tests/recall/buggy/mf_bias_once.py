"""Matrix factorisation with user, item and global biases; the bias grid is added up once, before
the epochs. Addition saves no tensors, so the later epochs re-run the freed addition node without
an error, and every epoch predicts with the biases of the start of training."""
import torch
import torch.nn as nn

n_users, n_items, k = 5, 4, 3
U = nn.Parameter(torch.randn(n_users, k) * 0.1)
V = nn.Parameter(torch.randn(n_items, k) * 0.1)
user_bias = nn.Parameter(torch.zeros(n_users, 1))
item_bias = nn.Parameter(torch.zeros(1, n_items))
global_bias = nn.Parameter(torch.zeros(1))
opt = torch.optim.SGD([U, V, user_bias, item_bias, global_bias], lr=0.1)
ratings = torch.randint(1, 6, (n_users, n_items)).float()
observed = torch.rand(n_users, n_items) > 0.3

bias = user_bias + item_bias + global_bias
for epoch in range(3):
    pred = U @ V.t() + bias
    loss = ((pred - ratings)[observed] ** 2).mean()
    opt.zero_grad()
    loss.backward()  # expect: GG102
    opt.step()
