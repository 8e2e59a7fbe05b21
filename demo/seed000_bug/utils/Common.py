"""d2l-style helpers used by the notebook: relu, squared loss, minibatch SGD and a DataLoader."""
import torch


def relu(X):
    a = torch.zeros_like(X)
    return torch.max(X, a)


def loss(y_hat, y):
    """Squared loss, summed over the minibatch."""
    return ((y_hat - y.reshape(y_hat.shape)) ** 2 / 2).sum()


def sgd(params, lr, batch_size):
    """Minibatch stochastic gradient descent; clears the gradients afterwards."""
    with torch.no_grad():
        for param in params:
            param -= lr * param.grad / batch_size
            param.grad.zero_()


class DataLoader:
    """Yields shuffled minibatches ``X[idx], Y[idx]``."""

    def __init__(self, X, Y, batch_size, shuffle=True):
        self.X = X
        self.Y = Y
        self.batch_size = batch_size
        self.shuffle = shuffle

    def __len__(self):
        return (len(self.X) + self.batch_size - 1) // self.batch_size

    def __iter__(self):
        num_examples = len(self.X)
        if self.shuffle:
            indices = torch.randperm(num_examples)
        else:
            indices = torch.arange(num_examples)
        for i in range(0, num_examples, self.batch_size):
            idx = indices[i:min(i + self.batch_size, num_examples)]
            yield self.X[idx], self.Y[idx]
