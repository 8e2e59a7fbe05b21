# Source: https://github.com/zhangyu2234/Deep-learning-by-hand
"""A "deep learning by hand" notebook: a one-layer fully connected network trained with a
hand-written minibatch SGD on synthetic data. The labels are generated as
`Y = torch.mm(X, true_W) + true_b` from true_W / true_b created with requires_grad=True, so Y
carries that graph, and every minibatch label y = Y[idx] hangs on it. The first l.backward()
walks into the label-generating mm and frees it; the second batch's backward reaches it again and
raises. The notebook's helpers (relu, sgd, loss, DataLoader from utils.Common) are written out in
the usual d2l form; 200 samples instead of 4000."""
import torch

# Randomly generate our training samples and train labels
num_samples = 200
num_features = 2
num_hiddens = 2
# train samples
X = torch.randn((num_samples, num_features), dtype=torch.float32)
true_W = torch.randn((num_hiddens, 1), requires_grad=True, dtype=torch.float32)
true_b = torch.randn(1, requires_grad=True, dtype=torch.float32)
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
        l.backward()  # expect: GG101
        sgd([W, b], lr, batch_size)
    if (epoch+1) % 5 == 0:
        print(f'epoch {epoch + 1}, loss {l.item():f}')
