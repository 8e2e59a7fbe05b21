# Source: https://github.com/hhsecond/HandsOnDeepLearningWithPytorch/issues/2
"""numpy_like_fizbuz.py as the author fixed it ("I changed the code to use `device` and `dtype`
separately"): the weights are created directly with the right dtype and requires_grad=True, so
they are leaves and backward fills their .grad."""
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
device = torch.device('cpu')
dtype = torch.float64

x = torch.from_numpy(trX).to(device, dtype)
y = torch.from_numpy(trY).to(device, dtype)

w1 = torch.randn(input_size, hidden_size, device=device, dtype=dtype, requires_grad=True)
w2 = torch.randn(hidden_size, output_size, device=device, dtype=dtype, requires_grad=True)

b1 = torch.zeros(1, hidden_size, device=device, dtype=dtype, requires_grad=True)
b2 = torch.zeros(1, output_size, device=device, dtype=dtype, requires_grad=True)

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
            w1 -= lr * w1.grad
            w2 -= lr * w2.grad
            b1 -= lr * b1.grad
            b2 -= lr * b2.grad
        w1.grad.zero_()
        w2.grad.zero_()
        b1.grad.zero_()
        b2.grad.zero_()
    print(epoch, output.item())
