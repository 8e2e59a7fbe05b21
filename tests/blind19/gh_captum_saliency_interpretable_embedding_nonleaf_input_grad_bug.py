# Source: https://github.com/meta-pytorch/captum/issues/491
"""Captum attribution of a small tabular model with a categorical embedding: the
embedding layer is replaced by an InterpretableEmbedding (configure_interpretable_
embedding_layer), the categorical indices are turned into embeddings with
`indices_to_embeddings`, and Saliency attributes the class score to
`(x_cat_embeddings, x)`.

`indices_to_embeddings` runs the real nn.Embedding, so the embeddings are a non-leaf
tensor that requires grad. Saliency's `apply_gradient_requirements` and
`undo_gradient_requirements` (captum/attr/_utils/gradient.py) read `input.grad` of every
input, and reading `.grad` of that non-leaf tensor makes torch warn "The .grad attribute
of a Tensor that is not a leaf Tensor is being accessed" and return None (the issue:
Saliency / InputXGradient warn, IntegratedGradients does not).

The right fix on the user side (the _ok twin): attribute with respect to leaf inputs,
i.e. compute the embeddings without tracking (`.detach()` the result of
`indices_to_embeddings`).
Captum is replaced by a stand-in that keeps its code for these functions.
"""
import warnings

import torch
import torch.nn as nn


# ---- captum stand-in ------------------------------------------------------------------------
def apply_gradient_requirements(inputs):
    assert isinstance(inputs, tuple), "Inputs should be wrapped in a tuple prior to preparing for gradients"
    grad_required = []
    for index, input in enumerate(inputs):
        assert isinstance(input, torch.Tensor), "Given input is not a torch.Tensor"
        grad_required.append(input.requires_grad)
        if not input.requires_grad:
            warnings.warn("Input Tensor %d did not already require gradients, "
                          "required_grads has been set automatically." % index)
            input.requires_grad_()
        if input.grad is not None:  # expect: GG106
            if torch.sum(torch.abs(input.grad)).item() > 1e-7:
                warnings.warn("Input Tensor %d had a non-zero gradient tensor, "
                              "which is being reset to 0." % index)
            input.grad.zero_()
    return grad_required


def undo_gradient_requirements(inputs, grad_required):
    for index, input in enumerate(inputs):
        if input.grad is not None:  # expect: GG106
            input.grad.detach_()
            input.grad.zero_()
        if not grad_required[index]:
            input.requires_grad_(False)


def compute_gradients(forward_fn, inputs, target_ind=None, additional_forward_args=None):
    with torch.autograd.set_grad_enabled(True):
        output = forward_fn(*inputs)
        if target_ind is not None:
            output = output[:, target_ind]
        grads = torch.autograd.grad(torch.unbind(output), inputs)
    return grads


class Saliency:
    def __init__(self, forward_func):
        self.forward_func = forward_func
        self.gradient_func = compute_gradients

    def attribute(self, inputs, target=None, abs=True, additional_forward_args=None):
        is_inputs_tuple = isinstance(inputs, tuple)
        inputs = inputs if is_inputs_tuple else (inputs,)
        gradient_mask = apply_gradient_requirements(inputs)
        gradients = self.gradient_func(self.forward_func, inputs, target, additional_forward_args)
        if abs:
            attributions = tuple(torch.abs(gradient) for gradient in gradients)
        else:
            attributions = gradients
        undo_gradient_requirements(inputs, gradient_mask)
        return attributions if is_inputs_tuple else attributions[0]


class InterpretableEmbeddingBase(nn.Module):
    def __init__(self, embedding, full_name):
        super().__init__()
        self.num_embeddings = getattr(embedding, "num_embeddings", None)
        self.embedding_dim = getattr(embedding, "embedding_dim", None)
        self.embedding = embedding
        self.full_name = full_name

    def forward(self, *inputs, **kwargs):
        # the model is given the embeddings directly
        return inputs[0]

    def indices_to_embeddings(self, *input, **kwargs):
        return self.embedding(*input, **kwargs)


def configure_interpretable_embedding_layer(model, embedding_layer_name="embedding"):
    embedding_layer = getattr(model, embedding_layer_name)
    interpretable_emb = InterpretableEmbeddingBase(embedding_layer, embedding_layer_name)
    setattr(model, embedding_layer_name, interpretable_emb)
    return interpretable_emb


# ---- the reporter's program ---------------------------------------------------------------------
class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.embedding = nn.Embedding(10, 3)
        self.fc = nn.Linear(5 + 3, 2)

    def forward(self, x_cat, x):
        x_cat = self.embedding(x_cat)
        x = torch.cat([x, x_cat], dim=1)
        x = self.fc(x)
        return x


def sal(model, X, node_index):
    sal = Saliency(model)
    grads = sal.attribute(X, node_index)
    return [g.squeeze().detach().numpy() for g in grads]


def train(model, x_cat, x, y, epochs=5):
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(epochs):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x_cat, x), y)
        loss.backward()
        opt.step()


if __name__ == '__main__':
    torch.manual_seed(0)
    model = Net()
    x_cat = torch.randint(0, 10, (4,))
    x = torch.randn(4, 5)
    y = torch.randint(0, 2, (4,))
    train(model, x_cat, x, y)

    interpretable_emb = configure_interpretable_embedding_layer(model, 'embedding')
    x_cat_emb = interpretable_emb.indices_to_embeddings(x_cat)
    X = (x_cat_emb, x)
    grads = sal(model, X, node_index=1)
    print([g.shape for g in grads])
