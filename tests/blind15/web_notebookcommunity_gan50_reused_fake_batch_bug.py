# Source: https://notebook.community/xiaoxiaoyao/MyApp/PythonApplication1/deeplearning/examples/.ipynb_checkpoints/gan_pytorch-checkpoint
"""A notebook.community copy of the Chinese write-up of Dev Nag's "GAN in under 50 lines of
PyTorch": G learns a 1-D Gaussian, D sees samples decorated with their squared deviations. The
notebook's D step detaches the generated batch ("detach to avoid training G on these labels") and
its G step draws fresh fakes. Here, to save a forward pass, the G step reuses the D step's fake
batch, generated without `.detach()`: `d_fake_error.backward()` already freed G's part of that graph,
so `g_error.backward()` raises "Trying to backward through the graph a second time". Fix (the
notebook's loop): detach the fakes D trains on, and let the G step generate its own.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim
from torch.autograd import Variable

data_mean, data_stddev = 4, 1.25
g_input_size, g_hidden_size, g_output_size = 1, 16, 1
d_input_size, d_hidden_size, d_output_size = 40, 16, 1
minibatch_size = d_input_size
d_learning_rate, g_learning_rate, optim_betas = 2e-4, 2e-4, (0.9, 0.999)
num_epochs, d_steps, g_steps = 3, 1, 1


def get_distribution_sampler(mu, sigma):
    return lambda n: torch.Tensor(np.random.normal(mu, sigma, (1, n)))


def get_generator_input_sampler():
    return lambda m, n: torch.rand(m, n)


def decorate_with_diffs(data, exponent):
    mean = torch.mean(data.data, 1, keepdim=True)
    mean_broadcast = torch.mul(torch.ones(data.size()), mean.tolist()[0][0])
    diffs = torch.pow(data - Variable(mean_broadcast), exponent)
    return torch.cat([data, diffs], 1)


class Generator(nn.Module):
    def __init__(self, input_size, hidden_size, output_size):
        super().__init__()
        self.map1 = nn.Linear(input_size, hidden_size)
        self.map2 = nn.Linear(hidden_size, hidden_size)
        self.map3 = nn.Linear(hidden_size, output_size)

    def forward(self, x):
        x = torch.nn.functional.elu(self.map1(x))
        x = torch.sigmoid(self.map2(x))
        return self.map3(x)


class Discriminator(nn.Module):
    def __init__(self, input_size, hidden_size, output_size):
        super().__init__()
        self.map1 = nn.Linear(input_size, hidden_size)
        self.map2 = nn.Linear(hidden_size, hidden_size)
        self.map3 = nn.Linear(hidden_size, output_size)

    def forward(self, x):
        x = torch.nn.functional.elu(self.map1(x))
        x = torch.nn.functional.elu(self.map2(x))
        return torch.sigmoid(self.map3(x))


preprocess = lambda data: decorate_with_diffs(data, 2.0)
d_sampler = get_distribution_sampler(data_mean, data_stddev)
gi_sampler = get_generator_input_sampler()
G = Generator(g_input_size, g_hidden_size, g_output_size)
D = Discriminator(d_input_size * 2, d_hidden_size, d_output_size)
criterion = nn.BCELoss()
d_optimizer = optim.Adam(D.parameters(), lr=d_learning_rate, betas=optim_betas)
g_optimizer = optim.Adam(G.parameters(), lr=g_learning_rate, betas=optim_betas)

np.random.seed(0)
for epoch in range(num_epochs):
    for d_index in range(d_steps):
        D.zero_grad()
        d_real_data = Variable(d_sampler(d_input_size))
        d_real_decision = D(preprocess(d_real_data))
        d_real_error = criterion(d_real_decision, Variable(torch.ones(1, 1)))
        d_real_error.backward()
        d_gen_input = Variable(gi_sampler(minibatch_size, g_input_size))
        d_fake_data = G(d_gen_input)
        d_fake_decision = D(preprocess(d_fake_data.t()))
        d_fake_error = criterion(d_fake_decision, Variable(torch.zeros(1, 1)))
        d_fake_error.backward()
        d_optimizer.step()

    for g_index in range(g_steps):
        G.zero_grad()
        g_fake_data = d_fake_data
        dg_fake_decision = D(preprocess(g_fake_data.t()))
        g_error = criterion(dg_fake_decision, Variable(torch.ones(1, 1)))
        g_error.backward()  # expect: GG101
        g_optimizer.step()

    print(epoch, d_real_error.item(), d_fake_error.item(), g_error.item())
