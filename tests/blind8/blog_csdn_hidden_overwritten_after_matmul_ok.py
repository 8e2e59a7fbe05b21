# Source: https://blog.csdn.net/yjy420/article/details/132636408
"""The post's point applied: the intermediate `d` that the second matmul saved may not be
overwritten before `f.backward()` (the post notes that writing into the final output would be
allowed). The overwrite, which served no computation, is dropped; the backward then works."""
import torch


def sgd(params, lr, batch_size):
    """Minibatch stochastic gradient descent (as in d2l)."""
    with torch.no_grad():
        for param in params:
            param -= lr * param.grad / batch_size
            param.grad.zero_()


w1 = torch.FloatTensor([[2.], [1.]])
w2 = torch.FloatTensor([3.])
w1.requires_grad = True
w2.requires_grad = True

for step in range(3):
    x = torch.randn(1, 2)
    d = torch.matmul(x, w1)
    f = torch.matmul(d, w2)
    f.backward()
    sgd([w1, w2], lr=0.03, batch_size=1)
    print(step, f.item())
