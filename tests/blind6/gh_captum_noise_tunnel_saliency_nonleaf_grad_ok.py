# Source: https://github.com/meta-pytorch/captum/issues/421
"""SmoothGrad with the maintainers' fix from Captum PR 426: NoiseTunnel builds the noisy inputs under
`torch.no_grad()`, so they are leaves; Saliency sets requires_grad on them itself and its
reset of `.grad` reads a leaf's attribute. Same Net, sal and sal_smooth, same input that requires
grad."""
import warnings

import numpy as np
import torch
import torch.nn as nn


def apply_gradient_requirements(inputs):
    grad_required = []
    for index, input in enumerate(inputs):
        grad_required.append(input.requires_grad)
        if not input.requires_grad:
            warnings.warn("Input Tensor %d did not already require gradients, "
                          "required_grads has been set automatically." % index)
            input.requires_grad_()
        if input.grad is not None:
            if torch.sum(torch.abs(input.grad)).item() > 1e-7:
                warnings.warn("Input Tensor %d had a non-zero gradient tensor, "
                              "which is being reset to 0." % index)
            input.grad.zero_()
    return grad_required


def undo_gradient_requirements(inputs, grad_required):
    for index, input in enumerate(inputs):
        if not grad_required[index]:
            input.requires_grad_(False)
            if input.grad is not None:
                input.grad.detach_()
                input.grad.zero_()


def compute_gradients(forward_fn, inputs, target_ind=None):
    with torch.autograd.set_grad_enabled(True):
        outputs = forward_fn(*inputs)
        outputs = outputs[torch.arange(outputs.shape[0]), target_ind]
        grads = torch.autograd.grad(torch.unbind(outputs), inputs)
    return grads


class Saliency:
    def __init__(self, forward_func):
        self.forward_func = forward_func

    def attribute(self, inputs, target=None, abs=True):
        inputs = (inputs,)
        gradient_mask = apply_gradient_requirements(inputs)
        gradients = compute_gradients(self.forward_func, inputs, target)
        attributions = tuple(torch.abs(gradient) for gradient in gradients) if abs else gradients
        undo_gradient_requirements(inputs, gradient_mask)
        return attributions[0]


class NoiseTunnel:
    def __init__(self, attribution_method):
        self.attribution_method = attribution_method

    def attribute(self, inputs, target=None, nt_type="smoothgrad_sq", n_samples=5, stdevs=1.0):
        def add_noise_to_input(input):
            bsz = input.shape[0]
            input_expanded_size = (bsz * n_samples,) + tuple(input.shape[1:])
            input_expanded = input.repeat(n_samples, *([1] * (input.dim() - 1)))
            noise = torch.tensor(np.random.normal(0, stdevs, input_expanded_size),
                                 device=input.device, dtype=input.dtype)
            return input_expanded + noise

        with torch.no_grad():
            inputs_with_noise = add_noise_to_input(inputs)
        target = target.repeat(n_samples) if isinstance(target, torch.Tensor) else target
        attributions = self.attribution_method.attribute(inputs_with_noise, target=target)
        attributions = attributions.view(n_samples, *inputs.shape)
        if nt_type == "smoothgrad_sq":
            return (attributions * attributions).mean(0)
        return attributions.mean(0)


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.fc = nn.Linear(5, 2)

    def forward(self, x):
        x = self.fc(x)
        return x


def sal(model, X, node_index):
    sal = Saliency(model)
    grads = sal.attribute(X, node_index).squeeze().detach().numpy()
    return grads


def sal_smooth(model, X, node_index):
    sal = Saliency(model)
    nt = NoiseTunnel(sal)
    grads = nt.attribute(X, target=node_index, nt_type='smoothgrad_sq',
                         n_samples=2, stdevs=0.2).squeeze().detach().numpy()
    return grads


model = Net()
X = torch.rand(4, 5, requires_grad=True)
node_index = torch.tensor([0, 1, 0, 1])
print(sal(model, X, node_index))
print(sal_smooth(model, X, node_index))
