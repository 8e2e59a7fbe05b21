# Source: https://github.com/karpathy/nn-zero-to-hero/issues/31
"""makemore part 1's neural bigram model run as the reporter's notebook did: the forward pass
(one-hot inputs @ W, softmax, negative log-likelihood) is evaluated once, and the cell with the
backward pass and the weight update is run again: the second loss.backward() finds the graph
that the first one freed."""
import torch
import torch.nn.functional as F

words = ["emma", "olivia", "ava"]
chars = sorted(set("".join(words)))
stoi = {s: i + 1 for i, s in enumerate(chars)}
stoi["."] = 0
xs, ys = [], []
for w in words:
    chs = ["."] + list(w) + ["."]
    for ch1, ch2 in zip(chs, chs[1:]):
        xs.append(stoi[ch1])
        ys.append(stoi[ch2])
xs, ys = torch.tensor(xs), torch.tensor(ys)
num = xs.nelement()

g = torch.Generator().manual_seed(2147483647)
W = torch.randn((27, 27), generator=g, requires_grad=True)

# forward pass
xenc = F.one_hot(xs, num_classes=27).float()
logits = xenc @ W
counts = logits.exp()
probs = counts / counts.sum(1, keepdims=True)
loss = -probs[torch.arange(num), ys].log().mean()

for k in range(3):
    print(loss.item())
    # backward pass
    W.grad = None
    loss.backward()  # expect: GG101
    # update
    W.data += -0.1 * W.grad
