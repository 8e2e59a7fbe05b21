# Source: https://twelvescompany.co.uk/post/error-message-like-runtime-error-one-of-the-variables
"""The article's hand-written update is legal (it runs under torch.no_grad()); what the loop lacks
is clearing the gradient after each step, so the next backward does not add to a gradient already
applied. The fix zeroes model.weight.grad after the update (and updates the bias the same way)."""
import torch

torch.manual_seed(0)


def train(model, input_tensor, steps=3, lr=0.1):
    for step in range(steps):
        output = model(input_tensor)
        loss = torch.mean((output - 1) ** 2)
        loss.backward()
        with torch.no_grad():
            model.weight -= lr * model.weight.grad
            model.bias -= lr * model.bias.grad
        model.weight.grad = None
        model.bias.grad = None
        print(step, loss.item())


model = torch.nn.Linear(10, 1)
input_tensor = torch.randn(1, 10, requires_grad=True)
train(model, input_tensor)
