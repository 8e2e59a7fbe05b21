# Source: https://github.com/flyingfish7777/Have-Useful-Tools-YOLOX/issues/1
"""https://github.com/flyingfish7777/Have-Useful-Tools-YOLOX/issues/1
Have-Useful-Tools-YOLOX's `yolox/utils/draw_cam.py` runs GradCAM on a YOLOX detector with
`targets=None`, fixed as the thread says: use the repository's own `base_cam.py` instead of the
installed pytorch-grad-cam's. With one argmax category per anchor each `ClassifierOutputTarget`
returns an [anchors, anchors] slice, so the package's `sum(target(output) ...)` was a matrix and
its backward raised "grad can be implicitly created only for scalar outputs"; the repository's
BaseCAM sums each target's score, `target(output).sum()`, into a scalar (its
`retain_graph=True` is dropped here too: nothing walks that graph again). pytorch_grad_cam, cv2 and
the YOLOX model are small stand-ins written here (32x32 random image, 3 classes, CPU)."""
from typing import Callable, List

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


# ---- stand-in for pytorch_grad_cam 1.4.x; BaseCAM is the repository's base_cam.py ----
class ClassifierOutputTarget:
    def __init__(self, category):
        self.category = category

    def __call__(self, model_output):
        if len(model_output.shape) == 1:
            return model_output[self.category]
        return model_output[:, self.category]


class ActivationsAndGradients:
    """ Class for extracting activations and
    registering gradients from targetted intermediate layers """

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


def scale_cam_image(cam, target_size=None):
    result = []
    for img in cam:
        img = img - np.min(img)
        img = img / (1e-7 + np.max(img))
        if target_size is not None:
            img = F.interpolate(torch.from_numpy(img)[None, None], size=target_size[::-1],
                                mode="bilinear", align_corners=False)[0, 0].numpy()
        result.append(img)
    return np.float32(result)


def show_cam_on_image(img, mask):
    heatmap = np.stack([mask, np.zeros_like(mask), 1 - mask], axis=-1)
    cam = heatmap + img
    cam = cam / np.max(cam)
    return np.uint8(255 * cam)


class BaseCAM:
    def __init__(self, model: torch.nn.Module, target_layers: List[torch.nn.Module], use_cuda: bool = False,
                 reshape_transform: Callable = None, compute_input_gradient: bool = False,
                 uses_gradients: bool = True) -> None:
        self.model = model.eval()
        self.target_layers = target_layers
        self.cuda = use_cuda and torch.cuda.is_available()
        self.reshape_transform = reshape_transform
        self.compute_input_gradient = compute_input_gradient
        self.uses_gradients = uses_gradients
        self.activations_and_grads = ActivationsAndGradients(self.model, target_layers, reshape_transform)

    def get_cam_weights(self, input_tensor, target_layers, targets, activations, grads):
        raise Exception("Not Implemented")

    def get_cam_image(self, input_tensor, target_layer, targets, activations, grads, eigen_smooth=False):
        weights = self.get_cam_weights(input_tensor, target_layer, targets, activations, grads)
        weighted_activations = weights[:, :, None, None] * activations
        return weighted_activations.sum(axis=1)

    def forward(self, input_tensor: torch.Tensor, targets: List[torch.nn.Module],
                eigen_smooth: bool = False) -> np.ndarray:
        if self.cuda:
            input_tensor = input_tensor.cuda()

        if self.compute_input_gradient:
            input_tensor = torch.autograd.Variable(input_tensor, requires_grad=True)

        outputs = self.activations_and_grads(input_tensor)
        if targets is None:
            target_categories = np.argmax(outputs.cpu().data.numpy(), axis=-1)
            targets = [ClassifierOutputTarget(category) for category in target_categories]

        if self.uses_gradients:
            self.model.zero_grad()
            loss = sum([target(output).sum()
                        for target, output in zip(targets, outputs)])
            loss.backward()

        cam_per_layer = self.compute_cam_per_layer(input_tensor, targets, eigen_smooth)
        return self.aggregate_multi_layers(cam_per_layer)

    def compute_cam_per_layer(self, input_tensor, targets, eigen_smooth):
        activations_list = [a.cpu().data.numpy() for a in self.activations_and_grads.activations]
        grads_list = [g.cpu().data.numpy() for g in self.activations_and_grads.gradients]
        target_size = input_tensor.size(-1), input_tensor.size(-2)
        cam_per_target_layer = []
        for i in range(len(self.target_layers)):
            target_layer = self.target_layers[i]
            layer_activations = activations_list[i] if i < len(activations_list) else None
            layer_grads = grads_list[i] if i < len(grads_list) else None
            cam = self.get_cam_image(input_tensor, target_layer, targets, layer_activations, layer_grads,
                                     eigen_smooth)
            cam = np.maximum(cam, 0)
            scaled = scale_cam_image(cam, target_size)
            cam_per_target_layer.append(scaled[:, None, :])
        return cam_per_target_layer

    def aggregate_multi_layers(self, cam_per_target_layer):
        cam_per_target_layer = np.concatenate(cam_per_target_layer, axis=1)
        cam_per_target_layer = np.maximum(cam_per_target_layer, 0)
        result = np.mean(cam_per_target_layer, axis=1)
        return scale_cam_image(result)

    def __call__(self, input_tensor, targets=None, aug_smooth=False, eigen_smooth=False):
        return self.forward(input_tensor, targets, eigen_smooth)


class GradCAM(BaseCAM):
    def __init__(self, model, target_layers, use_cuda=False, reshape_transform=None):
        super(GradCAM, self).__init__(model, target_layers, use_cuda, reshape_transform)

    def get_cam_weights(self, input_tensor, target_layer, target_category, activations, grads):
        return np.mean(grads, axis=(2, 3))


# ---- stand-in for the YOLOX model (backbone, decoupled head with per-level stems) ----
class BaseConv(nn.Module):
    def __init__(self, in_channels, out_channels, ksize, stride):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, ksize, stride, (ksize - 1) // 2, bias=False)
        self.bn = nn.BatchNorm2d(out_channels)
        self.act = nn.SiLU()

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


class YOLOXHead(nn.Module):
    def __init__(self, num_classes, width=8, strides=(8, 16, 32)):
        super().__init__()
        self.num_classes = num_classes
        self.strides = strides
        self.stems = nn.ModuleList([BaseConv(width, width, 1, 1) for _ in strides])
        self.cls_preds = nn.ModuleList([nn.Conv2d(width, num_classes, 1) for _ in strides])
        self.reg_preds = nn.ModuleList([nn.Conv2d(width, 4, 1) for _ in strides])
        self.obj_preds = nn.ModuleList([nn.Conv2d(width, 1, 1) for _ in strides])

    def forward(self, xin):
        outputs = []
        for k, x in enumerate(xin):
            x = self.stems[k](x)
            output = torch.cat([self.reg_preds[k](x), self.obj_preds[k](x).sigmoid(),
                                self.cls_preds[k](x).sigmoid()], 1)
            outputs.append(output)
        # [batch, n_anchors_all, 5 + num_classes], as YOLOX in eval mode (decode_in_inference)
        return torch.cat([x.flatten(start_dim=2) for x in outputs], dim=2).permute(0, 2, 1)


class YOLOX(nn.Module):
    def __init__(self, num_classes=3, width=8):
        super().__init__()
        self.stem = BaseConv(3, width, 3, 2)
        self.dark3 = BaseConv(width, width, 3, 4)
        self.dark4 = BaseConv(width, width, 3, 2)
        self.dark5 = BaseConv(width, width, 3, 2)
        self.head = YOLOXHead(num_classes, width)

    def forward(self, x):
        c3 = self.dark3(self.stem(x))
        c4 = self.dark4(c3)
        c5 = self.dark5(c4)
        return self.head([c3, c4, c5])


# ---- yolox/utils/draw_cam.py ----
def get_cam(model, image_tensor, image_path, test_size):
    target_layer = [model.head.stems[2].act]
    rgb_img = np.random.default_rng(0).random((test_size[1], test_size[0], 3))  # cv2.imread stand-in
    rgb_img = np.float32(rgb_img)

    cam = GradCAM(model=model, target_layers=target_layer, use_cuda=True)
    target_category = None
    grayscale_cam = cam(input_tensor=image_tensor, targets=target_category)

    grayscale_cam = grayscale_cam[0]
    visualization = show_cam_on_image(rgb_img, grayscale_cam)
    return visualization


torch.manual_seed(0)
model = YOLOX(num_classes=3)
model.eval()
test_size = (32, 32)
img = torch.rand(1, 3, *test_size)
vis = get_cam(model, img, "assets/dog.jpg", test_size)
print(vis.shape)
