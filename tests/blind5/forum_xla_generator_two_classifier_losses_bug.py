# Source: https://github.com/pytorch/xla/issues/1961
"""The reporter's "Unable to backward two losses": a dummy generator (nn.Linear(1, 10)) feeds two
dummy classifiers (nn.Linear(10, 1) and nn.Linear(10, 2)); each classifier has its own loss, and
`loss1.backward()` is followed by `loss2.backward()`. Both losses' graphs run through the one
generator output `gen`, whose graph the first backward frees. On a Colab TPU the process crashed
without a message; on CPU, torch 2.13 raises "Trying to backward through the graph a second time"
at loss2.backward() (the maintainer's diagnosis: "the only common tensor for the two graphs is
gen"). The reporter's model and loader (np.arange(100) as float samples, batch 4), without
torch_xla's device, sampler and parallel loader; the two losses (MSE for the one-output
classifier, cross-entropy for the two-class one) and the SGD step are filled in."""
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
        loss1.backward()
        loss2.backward()  # expect: GG101
        optimizer.step()
        print(step, loss1.item(), loss2.item())


map_train()
