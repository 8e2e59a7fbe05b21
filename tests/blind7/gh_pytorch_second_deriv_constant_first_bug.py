# Source: https://github.com/pytorch/pytorch/issues/32304
"""pytorch issue 32304: the reporter's second_deriv helper takes the first derivative with
create_graph=True and differentiates it again. For a potential that is linear in x the first
derivative is a constant, autograd gives it no grad_fn, and the second torch.autograd.grad fails
("element 0 of tensors does not require grad and does not have a grad_fn") where the reporter
expected zero. The helper is the reporter's; it is used here to get the stiffness (curvature at
the rest position) of each term of a 1-D potential energy, a spring, gravity and a quartic term."""
import torch


def second_deriv(y, x):
    # first derivative of scalar y = f(x) wrt scalar x
    first = torch.autograd.grad(y, x, create_graph=True)[0]
    # second derivative of y wrt x
    second = torch.autograd.grad(first, x, create_graph=True)[0]  # expect: GG104
    return second


k, m, g, a = 4.0, 0.5, 9.81, 0.1
potentials = {
    "spring": lambda x: 0.5 * k * x ** 2,
    "gravity": lambda x: m * g * x,
    "quartic": lambda x: a * x ** 4,
}

x = torch.tensor(1.0, requires_grad=True)
stiffness = {}
for name, V in potentials.items():
    stiffness[name] = second_deriv(V(x), x).item()
    print(name, stiffness[name])
print("total stiffness", sum(stiffness.values()))
