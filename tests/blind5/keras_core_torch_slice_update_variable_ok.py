# Source: https://github.com/keras-team/keras-core/pull/405
"""Keras Core's torch-backend slice_update with the fix of PR 405: the input is cloned,
`outputs = torch.clone(inputs)`, and the update is written into the clone, so a KerasVariable's
Parameter is never modified in place and the gradient flows to it through the clone. A minimal
Variable wraps an nn.Parameter as KerasVariable does, and a soft-prompt embedding layer trained on
random tokens stands in for the model."""
import builtins

import numpy as np
import torch
import torch.nn.functional as F


class Variable:
    """KerasVariable on the torch backend: the value is an nn.Parameter."""

    def __init__(self, initial_value, trainable=True):
        self.value = torch.nn.Parameter(torch.as_tensor(initial_value, dtype=torch.float32),
                                        requires_grad=trainable)


def convert_to_tensor(x, dtype=None):
    if isinstance(x, int):
        dtype = torch.int32
    if isinstance(x, float):
        dtype = torch.float32
    if isinstance(x, Variable):
        # TorchDynamo has bugs supporting nn.Parameter type check.
        # Return it directly instead of pass it to the rest of the logic in the
        # function.
        return x.value
    if torch.is_tensor(x):
        if dtype and dtype != x.dtype:
            x = x.to(dtype)
        return x
    if not isinstance(x, (list, tuple)):
        x = np.array(x)
    elif len(x) > 0 and isinstance(x[0], torch.Tensor):
        return torch.stack(x)
    return torch.as_tensor(x, dtype=dtype)


def slice_update(inputs, start_indices, updates):
    inputs = convert_to_tensor(inputs)
    start_indices = convert_to_tensor(start_indices).to(torch.int64)
    updates = convert_to_tensor(updates)

    python_slice = builtins.slice
    slices = [
        python_slice(start_index, start_index + update_length)
        for start_index, update_length in zip(start_indices, updates.shape)
    ]
    outputs = torch.clone(inputs)
    outputs[slices] = updates
    return outputs


class SoftPromptEmbedding:
    """Token embeddings whose first rows are replaced by a learned prompt projected from a seed."""

    def __init__(self, vocab_size, dim, prompt_len):
        rng = np.random.default_rng(0)
        self.embeddings = Variable(rng.normal(size=(vocab_size, dim)) * 0.1)
        self.prompt_seed = Variable(rng.normal(size=(prompt_len, dim)) * 0.1)
        self.prompt_proj = Variable(np.eye(dim))

    def trainable_weights(self):
        return [self.embeddings.value, self.prompt_seed.value, self.prompt_proj.value]

    def __call__(self, token_ids):
        prompt = convert_to_tensor(self.prompt_seed) @ convert_to_tensor(self.prompt_proj)
        table = slice_update(self.embeddings, [0, 0], prompt)
        return table[token_ids]


layer = SoftPromptEmbedding(vocab_size=20, dim=8, prompt_len=3)
head = torch.nn.Linear(8, 2)
optimizer = torch.optim.Adam(layer.trainable_weights() + list(head.parameters()), lr=1e-2)
for step in range(3):
    token_ids = torch.randint(0, 20, (4, 6))
    labels = torch.randint(0, 2, (4,))
    logits = head(layer(token_ids).mean(1))
    loss = F.cross_entropy(logits, labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(step, loss.item())
