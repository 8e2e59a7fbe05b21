# Source: https://github.com/pytorch/xla/issues/1961
"""The maintainer's answer: the first backward keeps the shared graph, `loss1.backward(
retain_graph=True)`, and loss2's backward walks it once more (the reporter's own workaround,
backwarding the sum, gives the same gradients). Same generator, classifiers, loader and losses."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def map_train(index=0):
    generator = nn.Linear(1, 10)       # dummy generator
    classifier_1 = nn.Linear(10, 1)    # dummy classifier 1
    classifier_2 = nn.Linear(10, 2)    # dummy classifier 2
    params = list(generator.parameters()) + list(classifier_1.parameters()) + list(classifier_2.parameters())
    optimizer = torch.optim.SGD(params, lr=0.01)

    loader = torch.utils.data.DataLoader(
        list(np.arange(100, dtype=np.float32)),
        batch_size=4,
        shuffle=True,
        drop_last=True)

    for step, data in enumerate(loader):
        if step == 3:
            break
        data = data.unsqueeze(1)
        optimizer.zero_grad()
        gen = generator(data)
        loss1 = F.mse_loss(classifier_1(gen), torch.zeros(4, 1))
        loss2 = F.cross_entropy(classifier_2(gen), torch.randint(0, 2, (4,)))
        loss1.backward(retain_graph=True)
        loss2.backward()
        optimizer.step()
        print(step, loss1.item(), loss2.item())


map_train()
