# Source: https://github.com/pytorch/pytorch/issues/22860
"""Fixed twin of q_pytorch_grad_none_after_to_device_bug.py. The user made a leaf with
`requires_grad=True` and then replaced it by its copy on `cuda:0` (`x = x.to(device)`), so after
`function.backward()` the printed `x.grad` was that non-leaf copy's: None, with torch's warning. The
fix maintainers gave for the same question (#8287, #560), applied here: the leaf is created on the
device, `torch.tensor(..., requires_grad=True, device=device)`, and no copy is made.
"""
import torch

print( torch.__version__ )
print( torch.cuda.is_available() )
print( torch.version.cuda )

#######
device = torch.device('cuda:0'
                      if torch.cuda.is_available()
                      else 'cpu')
#######

x = torch.tensor(
    [[1.,  2.,  3.,  4.],
     [5.,  6.,  7.,  8.],
     [9., 10., 11., 12.]], requires_grad=True, device=device)


function = 10 * (x ** 2).sum()

function.backward()

print(x.grad, '<- gradient')
