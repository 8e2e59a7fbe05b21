# Source: https://github.com/pytorch/pytorch/issues/1479
"""pytorch issue #1479 ("use view on variable cause backward fail to assign grad?"): the reporter
builds ``b`` as ``Variable(..., requires_grad=True).view(3, 1)``, backpropagates ``a.mm(b).sum()``
and prints ``b.grad`` -- ``None``, while building the Variable from an already reshaped tensor
gives the expected gradient.

``.view`` is an operation recorded by autograd, so the name ``b`` is bound to the *output* of
``ViewBackward``, a non-leaf tensor; the gradient is accumulated into the unnamed leaf that was
created with ``requires_grad=True`` and never bound to a name.  Reading ``b.grad`` on the non-leaf
makes torch warn ("The .grad attribute of a Tensor that is not a leaf Tensor is being accessed")
and return ``None``.  The second half of the script (view first, then wrap) is already correct.

Fix (soumith's answer in the thread): keep the leaf the user creates -- reshape the data before
making it require grad (as the reporter's second block does) and read the gradient of that leaf.
The reporter's ``Variable`` calls are kept (``Variable`` still returns a plain tensor).
"""
import torch
from torch.autograd import Variable

a = Variable(torch.Tensor([1, 2, 3])).view(1, 3)
b = Variable(torch.Tensor([4, 5, 6]), requires_grad=True).view(3, 1)  # view applied to variable makes b.grad None
c = a.mm(b).sum()
c.backward()
print(a.requires_grad)
print(b.requires_grad)
print(b.grad)  # expect: GG106

print('-' * 20)

del a, b, c

a = Variable(torch.Tensor([1, 2, 3])).view(1, 3)
b = Variable(torch.Tensor([4, 5, 6]).view(3, 1), requires_grad=True)  # view applied to tensor works
c = a.mm(b).sum()
c.backward()
print(a.requires_grad)
print(b.requires_grad)
print(b.grad)
