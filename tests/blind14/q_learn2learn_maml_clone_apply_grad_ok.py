# Source: https://github.com/learnables/learn2learn/issues/188
"""Fixed twin of q_learn2learn_maml_clone_apply_grad_bug.py. learn2learn's `clone_module` replaced
every parameter of the cloned learner by a non-leaf `.clone()` and then ran
`clone._apply(lambda x: x)` on every module; `nn.Module._apply` reads `param.grad` of those
non-leaf clones, so each `maml.clone()` warned "The .grad attribute of a Tensor that is not a leaf
Tensor is being accessed". The fix is the maintainers' change after this report: rebuild the
flattened weights only for modules that have `flatten_parameters` (RNNs), so the CNN learner's
clones are never passed through `_apply`. learn2learn's MAML/clone_module/update_module and the
task sampler are small stand-ins; images are 3x16x16 random tensors.
"""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import autograd

# ----------------------------- learn2learn/utils.py (stand-in, v0.1.4) -----------------------------


def clone_module(module, memo=None):
    if memo is None:
        memo = {}
    if not isinstance(module, torch.nn.Module):
        return module
    clone = module.__new__(type(module))
    clone.__dict__ = module.__dict__.copy()
    clone._parameters = clone._parameters.copy()
    clone._buffers = clone._buffers.copy()
    clone._modules = clone._modules.copy()

    # First, re-write all parameters
    if hasattr(clone, '_parameters'):
        for param_key in module._parameters:
            if module._parameters[param_key] is not None:
                param = module._parameters[param_key]
                param_ptr = param.data_ptr
                if param_ptr in memo:
                    clone._parameters[param_key] = memo[param_ptr]
                else:
                    cloned = param.clone()
                    clone._parameters[param_key] = cloned
                    memo[param_ptr] = cloned

    # Second, handle the buffers if necessary
    if hasattr(clone, '_buffers'):
        for buffer_key in module._buffers:
            if clone._buffers[buffer_key] is not None and \
                    clone._buffers[buffer_key].requires_grad:
                buff = module._buffers[buffer_key]
                clone._buffers[buffer_key] = buff.clone()

    # Then, recurse for each submodule
    if hasattr(clone, '_modules'):
        for module_key in clone._modules:
            clone._modules[module_key] = clone_module(module._modules[module_key], memo=memo)

    # Finally, rebuild the flattened parameters for RNNs
    # See this issue for more details:
    # https://github.com/learnables/learn2learn/issues/139
    if hasattr(clone, 'flatten_parameters'):
        clone = clone._apply(lambda x: x)
    return clone


def update_module(module, updates=None, memo=None):
    if memo is None:
        memo = {}
    if updates is not None:
        params = list(module.parameters())
        for p, g in zip(params, updates):
            p.update = g

    for param_key in module._parameters:
        p = module._parameters[param_key]
        if p is not None and hasattr(p, 'update') and p.update is not None:
            if p in memo:
                module._parameters[param_key] = memo[p]
            else:
                updated = p + p.update
                p.update = None
                memo[p] = updated
                module._parameters[param_key] = updated

    for module_key in module._modules:
        module._modules[module_key] = update_module(module._modules[module_key], updates=None, memo=memo)
    return module


class MAML(nn.Module):
    def __init__(self, model, lr, first_order=False):
        super().__init__()
        self.module = model
        self.lr = lr
        self.first_order = first_order

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def adapt(self, loss):
        gradients = autograd.grad(loss, self.module.parameters(), retain_graph=not self.first_order,
                                  create_graph=not self.first_order, allow_unused=True)
        updates = [-self.lr * g for g in gradients]
        self.module = update_module(self.module, updates=updates)

    def clone(self):
        return MAML(clone_module(self.module), lr=self.lr, first_order=self.first_order)

# ----------------------------- the reporter's 5-way MAML training -----------------------------


class ConvNet(nn.Module):
    def __init__(self, ways=5):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
                                      nn.Conv2d(8, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2))
        self.classifier = nn.Linear(8 * 4 * 4, ways)

    def forward(self, x):
        return self.classifier(self.features(x).flatten(1))


def sample_task(ways=5, shots=1, queries=2):
    adaptation = torch.randn(ways * shots, 3, 16, 16)
    adaptation_labels = torch.arange(ways).repeat_interleave(shots)
    evaluation = torch.randn(ways * queries, 3, 16, 16)
    evaluation_labels = torch.arange(ways).repeat_interleave(queries)
    return adaptation, adaptation_labels, evaluation, evaluation_labels


def accuracy(predictions, targets):
    predictions = predictions.argmax(dim=1).view(targets.shape)
    return (predictions == targets).sum().float() / targets.size(0)


def fast_adapt(batch, learner, loss, adaptation_steps):
    adaptation_data, adaptation_labels, evaluation_data, evaluation_labels = batch
    for step in range(adaptation_steps):
        train_error = loss(learner(adaptation_data), adaptation_labels)
        learner.adapt(train_error)
    predictions = learner(evaluation_data)
    valid_error = loss(predictions, evaluation_labels)
    valid_accuracy = accuracy(predictions, evaluation_labels)
    return valid_error, valid_accuracy


torch.manual_seed(0)
model = ConvNet(ways=5)
maml = MAML(model, lr=0.5, first_order=False)
opt = torch.optim.Adam(maml.parameters(), 0.003)
loss = nn.CrossEntropyLoss(reduction='mean')

meta_batch_size = 2
for iteration in range(2):
    opt.zero_grad()
    meta_train_error = 0.0
    for task in range(meta_batch_size):
        learner = maml.clone()
        batch = sample_task()
        evaluation_error, evaluation_accuracy = fast_adapt(batch, learner, loss, adaptation_steps=1)
        evaluation_error.backward()
        meta_train_error += evaluation_error.item()
    for p in maml.parameters():
        p.grad.data.mul_(1.0 / meta_batch_size)
    opt.step()
    print(iteration, meta_train_error / meta_batch_size)
