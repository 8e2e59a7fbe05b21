# Source: https://github.com/PAIR-code/saliency/issues/84
"""PAIR-code/saliency with a PyTorch model, fixed as the library's PyTorch example does it (the
thread had no answer): GetMask gets a plain numpy image, and call_model_function turns each batch
into a tensor that requires grad (requires_grad_(True) in PreprocessImages) before the forward
pass, so torch.autograd.grad has an input to differentiate and numpy never sees a grad tensor.
"""
import numpy as np
import torch
import torch.nn as nn

INPUT_OUTPUT_GRADIENTS = "INPUT_OUTPUT_GRADIENTS"


class GradientSaliency:
    """Stand-in for saliency.core.GradientSaliency (numpy in, numpy out)."""

    expected_keys = [INPUT_OUTPUT_GRADIENTS]

    def GetMask(self, x_value, call_model_function, call_model_args=None):
        x_value_batched = np.expand_dims(x_value, axis=0)
        call_model_output = call_model_function(x_value_batched, call_model_args=call_model_args,
                                                expected_keys=self.expected_keys)
        return call_model_output[INPUT_OUTPUT_GRADIENTS][0]

    def GetSmoothedMask(self, x_value, call_model_function, call_model_args=None, nsamples=3, stdev=0.15):
        total = np.zeros_like(x_value)
        for _ in range(nsamples):
            noise = np.random.normal(0, stdev, x_value.shape).astype(np.float32)
            total += self.GetMask(x_value + noise, call_model_function, call_model_args)
        return total / nsamples


model = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                      nn.Flatten(), nn.Linear(4, 5))
model.eval()
class_idx_str = "class_idx_str"


def PreprocessImages(images):
    images = torch.as_tensor(np.asarray(images), dtype=torch.float32)
    images = images.permute(0, 3, 1, 2)
    return images.requires_grad_(True)


def call_model_function(images, call_model_args=None, expected_keys=None):
    images = PreprocessImages(images)
    target_class_idx = call_model_args[class_idx_str]
    output = model(images)
    output = torch.nn.Softmax(dim=1)(output)
    if INPUT_OUTPUT_GRADIENTS in expected_keys:
        outputs = output[:, target_class_idx]
        grads = torch.autograd.grad(outputs, images, grad_outputs=torch.ones_like(outputs))
        grads = torch.movedim(grads[0], 1, 3)
        return {INPUT_OUTPUT_GRADIENTS: grads.detach().numpy()}


im = np.random.rand(8, 8, 3).astype(np.float32)
call_model_args = {class_idx_str: 2}
gradient_saliency = GradientSaliency()
vanilla_mask_3d = gradient_saliency.GetMask(im, call_model_function, call_model_args)
smoothgrad_mask_3d = gradient_saliency.GetSmoothedMask(im, call_model_function, call_model_args)
print(vanilla_mask_3d.shape, smoothgrad_mask_3d.shape)
