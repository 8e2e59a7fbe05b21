# Source: https://github.com/scalalang2/selab-machinelearning-study
"""A Korean study-group notebook (tasks/torch/task-02-tensor-grad.ipynb) working through the autograd
tutorial: the saved outputs of its first cell print `x`, `y`, `z` and `out` without `requires_grad` /
`grad_fn`, so the cell that ran built `x = torch.ones(2, 2)` without `requires_grad=True`; the later cell's
`out.backward()` then raises "element 0 of tensors does not require grad and does not have a grad_fn"
(the traceback saved in the notebook). The fix, the source the notebook ends with:
`x = torch.ones(2, 2, requires_grad=True)`, so `out` has a graph back to `x` and `x.grad` is filled.
"""
import torch

x = torch.ones(2, 2)
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

out.backward()  # expect: GG104
print(x.grad)
