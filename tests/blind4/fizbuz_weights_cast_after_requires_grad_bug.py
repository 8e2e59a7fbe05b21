# Source: https://github.com/hhsecond/HandsOnDeepLearningWithPytorch/issues/2
"""Hands-On Deep Learning with PyTorch, chapter 2's numpy_like_fizbuz.py: the weights are made
with `torch.randn(input_size, hidden_size, requires_grad=True).type(dtype)`, where dtype is
torch.cuda.FloatTensor when a GPU is present. The cast makes a copy, so w1, w2, b1, b2 are non-leaf
tensors ("causes w1 to forget it is a user created variable", the reporter); after backward their
.grad is None, torch warns that a non-leaf's .grad is being read, and the gradient-descent update
(written here `w1 -= lr * w1.grad` under no_grad; the issue quotes only the creation line) raises
TypeError on the None. On CPU a cast to torch.FloatTensor is a no-op,
so the GPU cast is played by a cast to torch.DoubleTensor (the data is cast to the same dtype).
The fizbuz data helpers are rebuilt inline: binary-encoded numbers, one-hot fizz/buzz labels."""
import numpy as np
import torch


def binary_encoder(input_size):
    def wrapper(num):
        ret = [int(i) for i in '{0:b}'.format(num)]
        return [0] * (input_size - len(ret)) + ret
    return wrapper


def get_numpy_data(input_size=10, limit=1000):
    x = []
    y = []
    encoder = binary_encoder(input_size)
    for i in range(limit):
        x.append(encoder(i))
        if i % 15 == 0:
            y.append([1, 0, 0, 0])
        elif i % 5 == 0:
            y.append([0, 1, 0, 0])
        elif i % 3 == 0:
            y.append([0, 0, 1, 0])
        else:
            y.append([0, 0, 0, 1])
    return np.array(x), np.array(y)


epochs = 3
batches = 64
lr = 0.01
input_size = 10
output_size = 4
hidden_size = 100

trX, trY = get_numpy_data(input_size, limit=256)
dtype = torch.DoubleTensor  # torch.cuda.FloatTensor in the book when CUDA is available

x = torch.from_numpy(trX).type(dtype)
y = torch.from_numpy(trY).type(dtype)

w1 = torch.randn(input_size, hidden_size, requires_grad=True).type(dtype)
w2 = torch.randn(hidden_size, output_size, requires_grad=True).type(dtype)

b1 = torch.zeros(1, hidden_size, requires_grad=True).type(dtype)
b2 = torch.zeros(1, output_size, requires_grad=True).type(dtype)

no_of_batches = int(len(trX) / batches)
for epoch in range(epochs):
    for batch in range(no_of_batches):
        start = batch * batches
        end = start + batches
        x_ = x[start:end]
        y_ = y[start:end]

        a2 = x_.matmul(w1)
        a2 = a2.add(b1)
        h2 = a2.sigmoid()

        a3 = h2.matmul(w2)
        a3 = a3.add(b2)
        hyp = a3.sigmoid()

        error = hyp - y_
        output = error.pow(2).sum() / 2.0
        output.backward()

        with torch.no_grad():
            w1 -= lr * w1.grad  # expect: GG106
            w2 -= lr * w2.grad
            b1 -= lr * b1.grad
            b2 -= lr * b2.grad
        w1.grad.zero_()
        w2.grad.zero_()
        b1.grad.zero_()
        b2.grad.zero_()
    print(epoch, output.item())
