# Source: https://github.com/jacobgil/pytorch-grad-cam/issues/251
"""https://github.com/jacobgil/pytorch-grad-cam/issues/251
The "EigenCAM for YOLO5" tutorial run with grad-cam 1.3.7: the YOLOv5 hub model is wrapped in
AutoShape, whose `forward` is decorated with `@torch.no_grad()`, and EigenCAM needs no gradient,
but 1.3.7's `BaseCAM.forward` always builds a class-score loss and calls
`loss.backward(retain_graph=True)`; on the no-grad detections torch raises "element 0 of tensors
does not require grad and does not have a grad_fn". The maintainer's fix (grad-cam 1.3.9) gives
BaseCAM a `uses_gradients` flag that EigenCAM sets to False, so no backward runs. torch.hub's
YOLOv5s, pytorch_grad_cam 1.3.7, cv2 and pandas are small stand-ins written here (64x64 random
image, 4 classes, CPU)."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

COLORS = np.random.uniform(0, 255, size=(80, 3))


# ---- stand-in for torch.hub.load('ultralytics/yolov5', 'yolov5s') ----
class Conv(nn.Module):
    def __init__(self, c1, c2, k=1, s=1):
        super().__init__()
        self.conv = nn.Conv2d(c1, c2, k, s, k // 2, bias=False)
        self.bn = nn.BatchNorm2d(c2)
        self.act = nn.SiLU()

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


class Detect(nn.Module):
    def __init__(self, nc, ch):
        super().__init__()
        self.no = nc + 5
        self.m = nn.Conv2d(ch, self.no, 1)

    def forward(self, x):
        y = self.m(x).sigmoid()
        return y.flatten(2).permute(0, 2, 1)  # [batch, anchors, 5 + nc]


class DetectionModel(nn.Module):
    def __init__(self, nc=4):
        super().__init__()
        self.model = nn.Sequential(Conv(3, 8, 3, 2), Conv(8, 8, 3, 2), Conv(8, 8, 3, 2), Conv(8, 8, 1, 1),
                                   Detect(nc, 8))

    def forward(self, x, augment=False, profile=False):
        return self.model(x)


class Detections:
    def __init__(self, pred, names):
        self.xyxy = pred
        self.names = names


class AutoShape(nn.Module):
    conf = 0.25

    def __init__(self, model):
        super().__init__()
        self.model = model

    @torch.no_grad()
    def forward(self, imgs, size=640, augment=False, profile=False):
        if isinstance(imgs, torch.Tensor):
            return self.model(imgs, augment, profile)
        x = torch.stack([torch.from_numpy(np.float32(im) / 255).permute(2, 0, 1) for im in imgs])
        y = self.model(x, augment, profile)
        dets = []
        for p in y:
            keep = p[:, 4] > self.conf
            p = p[keep]
            boxes = p[:, :4] * x.shape[-1]
            xyxy = torch.cat([boxes[:, :2], boxes[:, :2] + boxes[:, 2:], p[:, 4:5],
                              p[:, 5:].argmax(1, keepdim=True).float()], 1)
            dets.append(xyxy)
        return Detections(dets, names=[f"class{i}" for i in range(p.shape[1] - 5)])


def hub_load(repo, name, pretrained=True):
    return AutoShape(DetectionModel())


# ---- stand-in for pytorch_grad_cam 1.3.7 ----
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
        self.activations.append(output.cpu().detach())

    def save_gradient(self, module, input, output):
        if not hasattr(output, "requires_grad") or not output.requires_grad:
            return

        def _store_grad(grad):
            self.gradients = [grad.cpu().detach()] + self.gradients

        output.register_hook(_store_grad)

    def __call__(self, x):
        self.gradients = []
        self.activations = []
        return self.model(x)


def get_2d_projection(activation_batch):
    activation_batch[np.isnan(activation_batch)] = 0
    projections = []
    for activations in activation_batch:
        reshaped_activations = activations.reshape(activations.shape[0], -1).transpose()
        reshaped_activations = reshaped_activations - reshaped_activations.mean(axis=0)
        U, S, VT = np.linalg.svd(reshaped_activations, full_matrices=True)
        projection = reshaped_activations @ VT[0, :]
        projection = projection.reshape(activations.shape[1:])
        projections.append(projection)
    return np.float32(projections)


def scale_cam_image(cam, target_size=None):
    result = []
    for img in cam:
        img = img - np.min(img)
        img = img / (1e-7 + np.max(img))
        if target_size is not None:
            img = F.interpolate(torch.from_numpy(np.float32(img))[None, None], size=target_size[::-1],
                                mode="bilinear", align_corners=False)[0, 0].numpy()
        result.append(img)
    return np.float32(result)


def show_cam_on_image(img, mask, use_rgb=False):
    heatmap = np.stack([mask, np.zeros_like(mask), 1 - mask], axis=-1)
    cam = heatmap + img
    cam = cam / np.max(cam)
    return np.uint8(255 * cam)


class BaseCAM:
    def __init__(self, model, target_layers, use_cuda=False, reshape_transform=None,
                 compute_input_gradient=False):
        self.model = model.eval()
        self.target_layers = target_layers
        self.cuda = use_cuda
        self.reshape_transform = reshape_transform
        self.compute_input_gradient = compute_input_gradient
        self.activations_and_grads = ActivationsAndGradients(self.model, target_layers, reshape_transform)

    def get_cam_image(self, input_tensor, target_layer, targets, activations, grads, eigen_smooth=False):
        raise Exception("Not Implemented")

    def forward(self, input_tensor, targets=None, eigen_smooth=False):
        if self.compute_input_gradient:
            input_tensor = torch.autograd.Variable(input_tensor, requires_grad=True)

        outputs = self.activations_and_grads(input_tensor)
        if targets is None:
            target_categories = np.argmax(outputs.cpu().data.numpy(), axis=-1)
            targets = [ClassifierOutputTarget(category) for category in target_categories]

        self.model.zero_grad()
        loss = sum([target(output) for target, output in zip(targets, outputs)])
        loss.backward(retain_graph=True)  # expect: GG104

        cam_per_layer = self.compute_cam_per_layer(input_tensor, targets, eigen_smooth)
        return self.aggregate_multi_layers(cam_per_layer)

    def compute_cam_per_layer(self, input_tensor, targets, eigen_smooth):
        activations_list = [a.cpu().data.numpy() for a in self.activations_and_grads.activations]
        grads_list = [g.cpu().data.numpy() for g in self.activations_and_grads.gradients]
        target_size = input_tensor.size(-1), input_tensor.size(-2)
        cam_per_target_layer = []
        for i in range(len(self.target_layers)):
            layer_activations = activations_list[i] if i < len(activations_list) else None
            layer_grads = grads_list[i] if i < len(grads_list) else None
            cam = self.get_cam_image(input_tensor, self.target_layers[i], targets, layer_activations,
                                     layer_grads, eigen_smooth)
            cam = np.maximum(cam, 0)
            scaled = scale_cam_image(cam, target_size)
            cam_per_target_layer.append(scaled[:, None, :])
        return cam_per_target_layer

    def aggregate_multi_layers(self, cam_per_target_layer):
        cam_per_target_layer = np.concatenate(cam_per_target_layer, axis=1)
        cam_per_target_layer = np.maximum(cam_per_target_layer, 0)
        return scale_cam_image(np.mean(cam_per_target_layer, axis=1))

    def __call__(self, input_tensor, targets=None, aug_smooth=False, eigen_smooth=False):
        return self.forward(input_tensor, targets, eigen_smooth)


class EigenCAM(BaseCAM):
    def __init__(self, model, target_layers, use_cuda=False, reshape_transform=None):
        super(EigenCAM, self).__init__(model, target_layers, use_cuda, reshape_transform)

    def get_cam_image(self, input_tensor, target_layer, target_category, activations, grads, eigen_smooth):
        return get_2d_projection(activations)


# ---- the tutorial ----
def parse_detections(results):
    detections = results.xyxy[0]
    boxes, colors, names = [], [], []
    for row in detections.tolist():
        xmin, ymin, xmax, ymax, confidence, category = row
        if confidence < 0.2:
            continue
        category = int(category)
        boxes.append((int(xmin), int(ymin), int(xmax), int(ymax)))
        colors.append(COLORS[category])
        names.append(results.names[category])
    return boxes, colors, names


torch.manual_seed(0)
img = np.random.default_rng(0).integers(0, 256, (64, 64, 3)).astype(np.uint8)  # cv2.imread + resize
rgb_img = img.copy()
img = np.float32(img) / 255
tensor = torch.from_numpy(img).permute(2, 0, 1).unsqueeze(0)  # transforms.ToTensor()(img).unsqueeze(0)

model = hub_load('ultralytics/yolov5', 'yolov5s', pretrained=True)
model.eval()
model.cpu()
target_layers = [model.model.model[-2]]

results = model([rgb_img])
boxes, colors, names = parse_detections(results)

cam = EigenCAM(model, target_layers, use_cuda=False)
grayscale_cam = cam(tensor)[0, :, :]
cam_image = show_cam_on_image(img, grayscale_cam, use_rgb=True)
print(cam_image.shape, len(boxes))
