# Source: https://github.com/zhangyu2234/Deep-learning-by-hand
"""The hand-written fully connected network, fixed where the notebook's analysis points: the
synthetic labels are data, not something to differentiate, so the generating weights are created
without requires_grad and Y carries no graph; each l.backward() then walks only its own batch's
forward pass."""
import torch

# Randomly generate our training samples and train labels
num_samples = 200
num_features = 2
num_hiddens = 2
# train samples
X = torch.randn((num_samples, num_features), dtype=torch.float32)
true_W = torch.randn((num_hiddens, 1), dtype=torch.float32)
true_b = torch.randn(1, dtype=torch.float32)
Y = torch.mm(X, true_W) + true_b


def relu(x):
    return torch.max(x, torch.zeros_like(x))


def loss(y_hat, y):
    return ((y_hat - y.reshape(y_hat.shape)) ** 2 / 2).mean()


def sgd(params, lr, batch_size):
    with torch.no_grad():
        for param in params:
            param -= lr * param.grad / batch_size
            param.grad.zero_()


class DataLoader:
    def __init__(self, X, Y, batch_size, shuffle=True):
        self.X, self.Y, self.batch_size, self.shuffle = X, Y, batch_size, shuffle

    def __iter__(self):
        n = self.X.shape[0]
        order = torch.randperm(n) if self.shuffle else torch.arange(n)
        for i in range(0, n, self.batch_size):
            idx = order[i:i + self.batch_size]
            yield self.X[idx], self.Y[idx]


# fc
def fc(x, w, b):
    return relu(torch.mm(x, w) + b)


# Randomly generate W and b and attach gradients
W = torch.normal(0, 0.01, size=(num_hiddens, 1), requires_grad=True)
b = torch.zeros(1, requires_grad=True)

batch_size = 20
lr = 0.01
num_epochs = 20
dataloader = DataLoader(X, Y, batch_size, shuffle=True)

for epoch in range(num_epochs):
    for x, y in dataloader:
        l = loss(fc(x, W, b), y)
        l.backward()
        sgd([W, b], lr, batch_size)
    if (epoch+1) % 5 == 0:
        print(f'epoch {epoch + 1}, loss {l.item():f}')
