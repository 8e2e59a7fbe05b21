"""backward() called twice on the same loss (Linear + CrossEntropyLoss)."""
import torch

in_dim, out_dim = (5, 2)
inputs = torch.randn(in_dim)
target = torch.tensor([1, 2], dtype=torch.float32)
model = torch.nn.Linear(in_dim, out_dim, bias=True)
out = model(inputs)
loss = torch.nn.CrossEntropyLoss()
computed_loss = loss(out, target)
computed_loss.backward()
computed_loss.backward()  # expect: GG101
for p in model.parameters():
    print(p.grad)
