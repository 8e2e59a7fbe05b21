# Source: https://github.com/DeepReinforcementLearning/DeepReinforcementLearningInAction/issues/42
"""Appendix A.4 of the book "Deep Reinforcement Learning in Action" (MNIST with a hand-written two-layer
network and a manual update under torch.no_grad()), as the reader typed it: every iteration
appends the loss tensor itself to `losses`, and plt.plot(losses) then turns the list into an
array, calling numpy() on tensors that require grad. matplotlib is not installed here, so the
conversion it performs (np.asarray on the list) stands in for plt.plot; random images stand in
for MNIST. The update never zeroes w1.grad / w2.grad, so every backward after the first adds to
gradients the previous update already applied."""
import torch
import numpy as np


def nn(x, w1, w2):
    l1 = x @ w1
    l1 = torch.relu(l1)
    l2 = l1 @ w2
    return l2


w1 = torch.randn(784, 20, requires_grad=True)
w2 = torch.randn(20, 10, requires_grad=True)

train_data = (torch.rand(60, 28, 28) * 255).round()
train_labels = torch.randint(0, 10, (60,))

lr = 0.0001
epochs = 3
batch_size = 10
losses = []
lossfn = torch.nn.CrossEntropyLoss()
for i in range(epochs):
    rid = np.random.randint(0, train_data.shape[0], size=batch_size)
    x = train_data[rid].float().flatten(start_dim=1)
    x /= x.max()
    pred = nn(x, w1, w2)
    target = train_labels[rid]
    loss = lossfn(pred, target)
    losses.append(loss)
    loss.backward()  # expect: GG201
    with torch.no_grad():
        w1 -= lr * w1.grad
        w2 -= lr * w2.grad

y = np.asarray(losses)  # expect: GG107
