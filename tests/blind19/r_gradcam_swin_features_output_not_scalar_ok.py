# Source: https://github.com/jacobgil/pytorch-grad-cam/issues/446
"""Grad-CAM on a Swin Transformer whose forward returns the feature map, not class scores.

The reporter runs pytorch-grad-cam's GradCAM (``cam(input_tensor=img_tensor, targets=...)``) on a
Swin Transformer.  BaseCAM.forward runs the model, applies each target to the per-image output and
calls ``loss.backward(retain_graph=True)`` on the sum.  Their Swin model's forward stops at the last
stage, so each image's output is a (H, W, C) feature map; ``ClassifierOutputTarget`` takes
``output[:, category]`` of it, which is a matrix, and the summed "loss" is not a scalar: torch raises
"grad can be implicitly created only for scalar outputs" in BaseCAM.forward.

Fix (the reporter's own, in the thread): finish the classifier in the CAM forward -- apply the
model's final ``norm``, average-pool and ``head`` to the outputs -- so each target picks one logit.
This twin applies that fix in BaseCAM.forward (the thread's fix).  It also calls
``loss.backward()`` without ``retain_graph=True``: nothing walks the graph again, so keeping it
alive is needless.  Small stand-ins below for pytorch-grad-cam (ActivationsAndGradients, BaseCAM, GradCAM,
ClassifierOutputTarget) and for the Swin model, keeping their structure.
"""
import numpy as np
import torch
import torch.nn as nn


# ---- stand-in for pytorch_grad_cam (1.4.x structure) ----
class ClassifierOutputTarget:
    def __init__(self, category):
        self.category = category

    def __call__(self, model_output):
        if len(model_output.shape) == 1:
            return model_output[self.category]
        return model_output[:, self.category]


class ActivationsAndGradients:
    def __init__(self, model, target_layers, reshape_transform):
        self.model = model
        self.gradients = []
        self.activations = []
        self.reshape_transform = reshape_transform
        self.handles = []
        for target_layer in target_layers:
            self.handles.append(target_layer.register_forward_hook(self.save_activation))
            self.handles.append(target_layer.register_forward_hook(self.save_gradient))

    def save_activation(self, module, input, output):
        activation = output
        if self.reshape_transform is not None:
            activation = self.reshape_transform(activation)
        self.activations.append(activation.cpu().detach())

    def save_gradient(self, module, input, output):
        if not hasattr(output, "requires_grad") or not output.requires_grad:
            return

        def _store_grad(grad):
            if self.reshape_transform is not None:
                grad = self.reshape_transform(grad)
            self.gradients = [grad.cpu().detach()] + self.gradients

        output.register_hook(_store_grad)

    def __call__(self, x):
        self.gradients = []
        self.activations = []
        return self.model(x)

    def release(self):
        for handle in self.handles:
            handle.remove()


class BaseCAM:
    def __init__(self, model, target_layers, reshape_transform=None):
        self.model = model.eval()
        self.target_layers = target_layers
        self.reshape_transform = reshape_transform
        self.activations_and_grads = ActivationsAndGradients(self.model, target_layers, reshape_transform)

    def get_cam_weights(self, grads):
        raise NotImplementedError

    def forward(self, input_tensor, targets):
        outputs = self.activations_and_grads(input_tensor)
        # add this way: finish the classifier so each target picks one logit
        out_nor = self.model.norm(outputs)
        out = self.model.avgpool(out_nor.flatten(1, 2).transpose(1, 2))
        out = torch.flatten(out, 1)
        outputs = self.model.head(out)
        if targets is None:
            target_categories = np.argmax(outputs.cpu().data.numpy(), axis=-1)
            targets = [ClassifierOutputTarget(category) for category in target_categories]

        self.model.zero_grad()
        loss = sum([target(output) for target, output in zip(targets, outputs)])
        loss.backward()

        cams = []
        for activations, grads in zip(self.activations_and_grads.activations,
                                      self.activations_and_grads.gradients):
            weights = self.get_cam_weights(grads.numpy())
            cam = np.maximum((weights[:, :, None, None] * activations.numpy()).sum(axis=1), 0)
            cams.append(cam)
        return np.mean(np.stack(cams), axis=0)

    def __call__(self, input_tensor, targets=None):
        return self.forward(input_tensor, targets)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_value, exc_tb):
        self.activations_and_grads.release()


class GradCAM(BaseCAM):
    def get_cam_weights(self, grads):
        return np.mean(grads, axis=(2, 3))


# ---- tiny Swin-like model: forward returns the last stage's feature map ----
class SwinBlock(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, dim * 2), nn.GELU(), nn.Linear(dim * 2, dim))

    def forward(self, x):
        return x + self.mlp(self.norm1(x))


class SwinTransformer(nn.Module):
    def __init__(self, dim=16, num_classes=5, patch=4):
        super().__init__()
        self.patch_embed = nn.Conv2d(3, dim, kernel_size=patch, stride=patch)
        self.layers = nn.Sequential(SwinBlock(dim), SwinBlock(dim))
        self.norm = nn.LayerNorm(dim)
        self.avgpool = nn.AdaptiveAvgPool1d(1)
        self.head = nn.Linear(dim, num_classes)

    def forward(self, x):
        x = self.patch_embed(x).permute(0, 2, 3, 1)  # B, H, W, C
        x = self.layers(x)
        return x  # feature map, no norm / pool / head


def reshape_transform(tensor):
    # B, H, W, C -> B, C, H, W (as in the pytorch-grad-cam Swin tutorial)
    return tensor.permute(0, 3, 1, 2)


torch.manual_seed(0)
model = SwinTransformer()
target_layers = [model.layers[-1].norm1]
img_tensor = torch.rand(1, 3, 32, 32)
target_category = [ClassifierOutputTarget(2)]

cam = GradCAM(model=model, target_layers=target_layers, reshape_transform=reshape_transform)
grayscale_cam = cam(input_tensor=img_tensor, targets=target_category)
grayscale_cam = grayscale_cam[0, :]
print(grayscale_cam.shape)
