# Source: https://github.com/BaiTheBest/SparseLLM/issues/13
"""SparseLLM's auxiliary-variable update: a chunk s_batch of the activation variables s is made a
leaf that requires grad, a few gradient steps are taken on its reconstruction loss by hand, and the
result is written back. The step s_batch -= s_learning_rate * s_batch.grad is an in-place update
of that leaf with grad enabled."""
import torch

torch.manual_seed(0)
n, d_in, d_out = 8, 6, 4
W = torch.randn(d_out, d_in)
z = torch.randn(n, d_out)
s = torch.randn(n, d_in, dtype=torch.float16)
s_learning_rate = 0.05

for chunk in torch.arange(n).split(4):
    s_batch = s[chunk].float().requires_grad_(True)
    for it in range(2):
        loss_s = ((s_batch @ W.t() - z[chunk]) ** 2).mean()
        loss_s.backward()
        s_batch -= s_learning_rate * s_batch.grad  # expect: GG108
        s_batch.grad.zero_()
    s[chunk] = s_batch.detach().to(dtype=torch.float16)
