"""Meta-learning with a learned weight mask: the masked weights are computed once per
meta-iteration and shared by all tasks; each task's query loss is backwarded on its own."""
import torch
import torch.nn as nn
import torch.nn.functional as F

net = nn.Linear(5, 2)
mask_logits = nn.Parameter(torch.zeros(2, 5))
meta_opt = torch.optim.Adam([*net.parameters(), mask_logits], lr=1e-3)

for meta_iter in range(2):
    weight = net.weight * torch.sigmoid(mask_logits)
    meta_opt.zero_grad()
    for task in range(3):
        xs, ys = torch.randn(4, 5), torch.randint(0, 2, (4,))
        w = weight - 0.1 * torch.autograd.grad(F.cross_entropy(F.linear(xs, weight, net.bias), ys),
                                               weight, create_graph=True)[0]
        xq, yq = torch.randn(4, 5), torch.randint(0, 2, (4,))
        query_loss = F.cross_entropy(F.linear(xq, w, net.bias), yq)
        query_loss.backward()  # expect: GG101
    meta_opt.step()
