import torch
from helper import fit

fit(torch.randn(3, requires_grad=True))
