# Source: https://github.com/scalalang2/selab-machinelearning-study
"""A Korean study-group notebook (tasks/torch/task-02-tensor-grad.ipynb) working through the autograd
tutorial: the cell that ran built `x` without `requires_grad=True` (its saved outputs show no `grad_fn`),
and `out.backward()` failed. Fixed as the notebook's source ends up: `x = torch.ones(2, 2,
requires_grad=True)`, so `out` has a graph back to `x` and `x.grad` is filled (0.75 everywhere).
"""
import torch

x = torch.ones(2, 2, requires_grad=True)
print(x)

y = x + 2
print(y)

z = y * y * 3
out = z.mean()
print(z, out)

# requires_grad 옵션은 기본적으로 False값이다. 중간에 requires_grad_ 를 이용해서 AUTOGRAD 모드를 활성화 할 수 있다.
a = torch.randn(2, 2)
a = ((a * 3) / (a - 1))
print(a.requires_grad)
a.requires_grad_(True)
print(a.requires_grad)
b = (a * a).sum()
print(b.grad_fn)

print("최종 결과인 out의 backward()를 수행한다.")

out.backward()
print(x.grad)
