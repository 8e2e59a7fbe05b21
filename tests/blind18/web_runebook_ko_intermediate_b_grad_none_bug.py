# Source: https://runebook.dev/ko/docs/pytorch/generated/torch.tensor.retains_grad
"""A Korean runebook page on `Tensor.retains_grad`: its first example builds `b = a * 3`, `c = b ** 2`,
`loss = c.sum()`, calls `loss.backward()` and prints `a.grad` and then `b.grad`, the gradient of the
intermediate tensor it wants to inspect. `b` is not a leaf, so torch warns "The .grad attribute of a Tensor
that is not a leaf Tensor is being accessed" and prints None. The page's fix: `b.retain_grad()` before the
backward, so `b.grad` is populated (`b.retains_grad` is then True).
"""
import torch

# 1. requires_grad=True로 텐서 a를 생성합니다.
a = torch.tensor([2.0], requires_grad=True)

# 2. b는 a를 사용한 연산 결과입니다. (중간 텐서)
b = a * 3

# 3. c는 b를 사용한 최종 연산 결과입니다.
c = b ** 2

# 4. loss를 c에서 계산합니다.
loss = c.sum()

# 5. 첫 번째 역전파를 수행합니다.
loss.backward()

# a의 기울기는 계산됩니다.
print(f"a.grad (역전파 1 후): {a.grad}")

# b는 중간 결과 텐서이므로, 기울기 정보가 사라집니다.
print(f"b.grad (역전파 1 후): {b.grad}")  # expect: GG106
print(f"b.retains_grad: {b.retains_grad}")
