# Source: https://discuss.pytorch.org/t/multiple-call-to-backward-still-works-when-retain-graph-false-why/9475
"""The forum thread "Multiple call to backward still works when retain_graph=False, why?": the
poster backwards y = x + 2 twice and sees no error with or without retain_graph. The answer: the
addition saves nothing, so the second walk happens to succeed; "if you change y = x + 2 to
y = x * x, you will see an error": the multiplication saves x, the first backward frees it, and the
second y.backward(gradient) raises "Trying to backward through the graph a second time". The
poster's script with the answer's change and retain_graph left out."""
import torch
from torch.autograd import Variable

x = Variable(torch.ones(2, 2), requires_grad=True)
y = x * x
y.backward(torch.ones(2, 2))
print(x.grad)
z = y * y
print(z)
gradient = torch.randn(2, 2)
y.backward(gradient)  # expect: GG101
print(x.grad)
