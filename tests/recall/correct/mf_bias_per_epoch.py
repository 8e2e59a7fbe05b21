"""Matrix factorisation whose bias grid is added up inside the epoch loop."""
import torch
import torch.nn as nn

U, V = nn.Parameter(torch.randn(5, 3) * 0.1), nn.Parameter(torch.randn(4, 3) * 0.1)
user_bias, item_bias = nn.Parameter(torch.zeros(5, 1)), nn.Parameter(torch.zeros(1, 4))
opt = torch.optim.SGD([U, V, user_bias, item_bias], lr=0.1)
ratings = torch.randint(1, 6, (5, 4)).float()
for epoch in range(3):
    pred = U @ V.t() + user_bias + item_bias
    loss = ((pred - ratings) ** 2).mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
