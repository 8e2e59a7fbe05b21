# Source: https://github.com/Bobholamovic/CDLab/issues/42
"""Grad-CAM (pytorch-grad-cam) on a CDLab change-detection model: "grad can be implicitly created
only for scalar outputs" whatever layer is chosen.

The reporter trains a CDLab siamese change-detection network and then runs pytorch-grad-cam's
GradCAM on it, with the classification target ``ClassifierOutputTarget``.  A change-detection
model does not output class scores: it outputs a per-pixel change map (B, 2, H, W).  BaseCAM.forward
applies the target to each image's output, ``output[:, category]`` is an (2, W) slice of that map,
and the summed "loss" is a matrix, so ``loss.backward(retain_graph=True)`` raises -- for any
target layer, as reported.  The maintainer's answer: the loss used for backpropagation is not a
scalar.

Fix (the right one for dense outputs, pytorch-grad-cam's SemanticSegmentationTarget): a target
that reduces the change-class score map over the predicted change mask to one number.  Stand-ins:
pytorch-grad-cam 1.4.x structure (ActivationsAndGradients, BaseCAM, GradCAM, targets) and a small
FC-Siam-diff style model; a wrapper feeds the two dates as one 6-channel tensor.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


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
        if targets is None:
            target_categories = np.argmax(outputs.cpu().data.numpy(), axis=-1)
            targets = [ClassifierOutputTarget(category) for category in target_categories]

        self.model.zero_grad()
        loss = sum([target(output) for target, output in zip(targets, outputs)])
        loss.backward(retain_graph=True)  # expect: GG105

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


# ---- small FC-Siam-diff style change-detection model (CDLab) ----
class ConvBlock(nn.Module):
    def __init__(self, in_ch, out_ch):
        super().__init__()
        self.conv = nn.Conv2d(in_ch, out_ch, 3, padding=1)
        self.bn = nn.BatchNorm2d(out_ch)

    def forward(self, x):
        return F.relu(self.bn(self.conv(x)))


class SiamUnet_diff(nn.Module):
    def __init__(self, in_ch=3, out_ch=2):
        super().__init__()
        self.conv11 = ConvBlock(in_ch, 8)
        self.conv21 = ConvBlock(8, 16)
        self.upconv2 = nn.ConvTranspose2d(16, 8, 2, stride=2)
        self.conv12d = ConvBlock(16, 8)
        self.conv11d = nn.Conv2d(8, out_ch, 1)

    def encode(self, x):
        x11 = self.conv11(x)
        x21 = self.conv21(F.max_pool2d(x11, 2))
        return x11, x21

    def forward(self, t1, t2):
        x11_1, x21_1 = self.encode(t1)
        x11_2, x21_2 = self.encode(t2)
        x2d = self.upconv2(torch.abs(x21_1 - x21_2))
        x1d = self.conv12d(torch.cat([x2d, torch.abs(x11_1 - x11_2)], 1))
        return self.conv11d(x1d)


class CDWrapper(nn.Module):
    """Feeds the two dates (stacked on channels) to the two-input change-detection model."""

    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        t1, t2 = torch.split(x, 3, dim=1)
        return self.model(t1, t2)


torch.manual_seed(0)
net = SiamUnet_diff()
# a few training steps, as in CDLab's trainer
optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
criterion = nn.CrossEntropyLoss()
for it in range(3):
    t1, t2 = torch.rand(2, 3, 16, 16), torch.rand(2, 3, 16, 16)
    tar = torch.randint(0, 2, (2, 16, 16))
    out = net(t1, t2)
    loss = criterion(out, tar)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

model = CDWrapper(net).eval()
target_layers = [net.conv12d]
input_tensor = torch.cat([torch.rand(1, 3, 16, 16), torch.rand(1, 3, 16, 16)], dim=1)
targets = [ClassifierOutputTarget(1)]

cam = GradCAM(model=model, target_layers=target_layers)
grayscale_cam = cam(input_tensor=input_tensor, targets=targets)
print(grayscale_cam.shape)
