# Source: https://blog.csdn.net/yjy420/article/details/132636408
"""The CSDN post "with torch.no_grad() and in-place operations on leaf nodes", second case: a
non-leaf tensor that requires grad and is needed for the gradient may not be modified in place
either. Its program: `d = torch.matmul(x, w1)`, `f = torch.matmul(d, w2)`, then `d[:] = 1` and
`f.backward()` raises "one of the variables needed for gradient computation has been modified by
an inplace operation" (the second matmul saved d to compute w2's gradient). The post's two
weights are trained here with the d2l-style `sgd` it quotes, on a few random samples."""
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
    d[:] = 1
    f.backward()  # expect: GG103
    sgd([w1, w2], lr=0.03, batch_size=1)
    print(step, f.item())
