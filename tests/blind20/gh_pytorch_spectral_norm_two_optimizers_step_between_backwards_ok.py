# Source: https://github.com/pytorch/pytorch/issues/55368
"""Backprop a second time through a `spectral_norm` module after an optimizer step (pytorch#55368).

The reporter wants, for GAN training, to run the forward once and reuse the same loss graph for two
optimizer steps ("not to perform forward of generator second time, but remember output for
discriminator and generator optimizing step").  Their program wraps a Linear layer in
`torch.nn.utils.spectral_norm`, computes one loss, then does
`opt1.zero_grad(); loss.backward(retain_graph=True); opt1.step()` followed by
`opt2.zero_grad(); loss.backward(); opt2.step()`.  Here the same pattern runs once per batch of a
small training loop.  Spectral norm computes `weight = weight_orig / sigma`, and that division saves
`weight_orig`; `opt1.step()` updates `weight_orig` in place, so the second `loss.backward()` raises
"one of the variables needed for gradient computation has been modified by an inplace operation:
[torch.FloatTensor [5, 2]] is at version 2; expected version 1".  (A plain Linear without spectral
norm would not raise here, because no saved tensor depends on the updated weight.)

Fix (the right one; the stored thread has no code fix): do both backward passes before
any step touches the shared weights, i.e. `loss.backward(retain_graph=True)` for the first
optimizer's gradients, the second backward, and only then `opt1.step(); opt2.step()`, or recompute
the forward after the first step.  This fixed variant computes the forward again after `opt1.step()`.
"""
import torch

torch.manual_seed(0)


def make_model():
    return torch.nn.utils.spectral_norm(torch.nn.Linear(2, 5))


def train(model, opt1, opt2, batches):
    for step, x in enumerate(batches):
        output = model(x)
        loss = output.abs().mean()

        opt1.zero_grad()
        loss.backward()
        opt1.step()  # first propagation

        output = model(x)  # forward again with the updated weights
        loss = output.abs().mean()
        opt2.zero_grad()
        loss.backward()
        opt2.step()  # second
        print(step, loss.item())


if __name__ == "__main__":
    model = make_model()
    opt1 = torch.optim.SGD(model.parameters(), lr=1e-3)
    opt2 = torch.optim.SGD(model.parameters(), lr=1e-3)
    batches = [torch.randn(7, 2) for _ in range(3)]
    train(model, opt1, opt2, batches)
