import torch

# The end-to-end test never opens this file: with gradguard.diagnosticScope "workspace" its
# problem still shows in the Problems panel.
w = torch.randn(3, requires_grad=True)
scores = torch.tanh(w * 2)
print(scores.numpy())
