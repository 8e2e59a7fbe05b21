# Source: https://twelvescompany.co.uk/post/error-message-like-runtime-error-one-of-the-variables
"""The article "RuntimeError: one of the variables needed for gradient computation has been
modified by an inplace operation: A Deep Dive" blames its scenario for that error: a Linear model
trained by hand, whose weight is updated in place under torch.no_grad() (printed as
"model.weight = 0.1 * model.weight.grad", the minus sign lost), after which the next iteration's
forward and backward are said to fail. Torch 2.13 raises nothing: the update runs under no_grad, and each iteration's
forward builds a new graph that saves the updated weight. The loop of the article, made a small
training function; the weight's gradient is never cleared, so each backward adds to a gradient
already applied (marked where torch observes it)."""
import torch

torch.manual_seed(0)


def train(model, input_tensor, steps=3, lr=0.1):
    for step in range(steps):
        output = model(input_tensor)
        loss = torch.mean((output - 1) ** 2)
        loss.backward()  # expect: GG201
        with torch.no_grad():
            model.weight -= lr * model.weight.grad
        print(step, loss.item())


model = torch.nn.Linear(10, 1)
input_tensor = torch.randn(1, 10, requires_grad=True)
train(model, input_tensor)
