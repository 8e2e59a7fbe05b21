# Source: https://blog.youkuaiyun.com/yangleileileilei/article/details/138536879
"""Plotting f(x) and its autograd derivative f'(x): the curves are converted with ``.numpy()`` without ``detach()``.

The post uses PyTorch's autograd instead of a hand-written derivative: it
builds ``x = torch.linspace(-6.5, 3.5, 1000, requires_grad=True)``, evaluates
``y_f = f(x)`` for ``f(x) = x*x + 3*x + 2``, calls ``y_f.sum().backward()`` so
that ``x.grad`` holds ``f'(x)``, and converts the three tensors to numpy
arrays for matplotlib.  It stresses that each conversion must go through
``detach()`` first ("注意,转换前需要调用detach函数").  Written without it, as
here, ``x.grad.numpy()`` still works (a gradient does not require grad) but
``y_f.numpy()`` is called on the output of the graph, a tensor that requires
grad, and raises "Can't call numpy() on Tensor that requires grad".

Fix (the post's code): ``y_f.detach().numpy()`` and ``x.detach().numpy()``
(see the _ok twin).  A no-op stand-in replaces ``matplotlib.pyplot``.
"""
import numpy as np
import torch


class _PyplotStandIn:
    """Minimal stand-in for matplotlib.pyplot: records what would be drawn."""

    def __init__(self):
        self.lines = []

    def plot(self, x, y, label=None):
        self.lines.append((np.asarray(x), np.asarray(y), label))

    def legend(self):
        pass

    def grid(self, flag):
        pass

    def show(self):
        print(f"{len(self.lines)} curves drawn")


plt = _PyplotStandIn()


# 使用pytorch的自动微分功能,只需要定义原函数f(x),不再需要定义导函数df(x)
def f(x):
    return x * x + 3 * x + 2


if __name__ == '__main__':
    # 使用torch.linspace生成自变量序列x
    # require_grad=True,代表张量x需要自动微分功能
    x = torch.linspace(-6.5, 3.5, 1000, requires_grad=True)
    # 计算函数值
    y_f = f(x)
    # 使用backward函数自动计算梯度
    # 这样所有的梯度值,就都会保存在x.grad中
    y_f.sum().backward()
    # 将梯度值x.grad、函数值y_f、自变量x,从pytorch张量转换为numpy数组
    y_df = x.grad.numpy()
    y_f = y_f.numpy()  # expect: GG107
    x = x.numpy()
    plt.plot(x, y_f, label='f(x)=x*x+3*x+2')
    plt.plot(x, y_df, label="f'(x)=2*x+3")
    plt.legend()  # 对图像进行标记
    plt.grid(True)  # 使用grid函数标记出网格线
    plt.show()
