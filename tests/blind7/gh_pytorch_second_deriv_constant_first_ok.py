# Source: https://github.com/pytorch/pytorch/issues/32304
"""pytorch issue 32304's second_deriv helper made to return what the reporter expected: when the
first derivative carries no graph (it is constant in x), the second derivative is zero, so the
helper returns zeros instead of differentiating a tensor without a grad_fn (the thread gives no
fix; torch keeps this behaviour). Same potentials and stiffness loop."""
import torch


def second_deriv(y, x):
    # first derivative of scalar y = f(x) wrt scalar x
    first = torch.autograd.grad(y, x, create_graph=True)[0]
    if not first.requires_grad:  # a constant first derivative: f is linear in x
        return torch.zeros_like(x)
    # second derivative of y wrt x
    second = torch.autograd.grad(first, x, create_graph=True)[0]
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
