# Source: https://runebook.dev/ko/docs/pytorch/generated/torch.tensor.backward
"""A Korean runebook page on `Tensor.backward` ("grad=None and graph reuse"): two losses share `b = a * 3`,
`c = b * b` used as the first loss and `d = b + 1` as the second, and each is backwarded; the page warns that
the first backward frees the graph the second one walks again through `b`. Fixed as the page does:
`c.backward(retain_graph=True)` keeps the shared graph for `d.backward()`, which frees it; `a.grad` adds up
to 27.
"""
import torch

a = torch.tensor(2.0, requires_grad=True)
b = a * 3
c = b * b  # 첫 번째 손실처럼 사용
d = b + 1  # 두 번째 손실처럼 사용

# c에 대해 역전파
c.backward(retain_graph=True)  # 그래프 유지!
print(f"a.grad after c.backward: {a.grad}")

# d에 대해 역전파 (a.grad에 누적됨)
d.backward()
print(f"a.grad after d.backward: {a.grad}")

# 참고: a.grad는 c에 대한 미분(12a) + d에 대한 미분(3) 이 누적됩니다.
# (12 * 2) + 3 = 27
