# Source: https://github.com/jacobgil/pytorch-grad-cam/issues/407
"""Fixed twin of q_gradcam_yolov7_classifier_target_bug.py. pytorch-grad-cam on YOLOv7 with the
classification recipe: `ClassifierOutputTarget(1)` received YOLO's whole (batch, boxes, 5 + classes)
inference output, so the CAM loss was a tensor and `loss.backward()` raised. The thread has no
answer; the right fix, applied here, is a target that reduces the detections to one score (the
confidence of class 1 summed over the boxes, objectness times class probability) and a target layer
whose forward runs: YOLOv7's `forward_once` calls the layers of `model.model` one by one, so the
hooks go on the last conv before `Detect` (`model.model[-2]`), not on the Sequential. YOLOv7,
pytorch-grad-cam and the image are small stand-ins written in the file (float32 on CPU).
"""
import numpy as np
import torch
import torch.nn as nn

# ----------------------------- stand-ins: YOLOv7 (models/yolo.py) -----------------------------


class Conv(nn.Module):
    def __init__(self, c1, c2, k=1, s=1):
        super().__init__()
        self.conv = nn.Conv2d(c1, c2, k, s, k // 2, bias=False)
        self.bn = nn.BatchNorm2d(c2)
        self.act = nn.SiLU()
        self.f, self.i = -1, 0

    def forward(self, x):
        return self.act(self.bn(self.conv(x)))


class Detect(nn.Module):
    def __init__(self, nc=80, anchors=((10, 13, 16, 30, 33, 23),), ch=(32,)):
        super().__init__()
        self.nc, self.no, self.nl = nc, nc + 5, len(anchors)
        self.na = len(anchors[0]) // 2
        self.m = nn.ModuleList(nn.Conv2d(x, self.no * self.na, 1) for x in ch)
        self.register_buffer('anchor_grid', torch.tensor(anchors).float().view(self.nl, 1, -1, 1, 1, 2))
        self.stride = torch.tensor([8.0])
        self.f, self.i = -1, 0

    def forward(self, x):
        x = [x]
        z = []
        for i in range(self.nl):
            x[i] = self.m[i](x[i])
            bs, _, ny, nx = x[i].shape
            x[i] = x[i].view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2).contiguous()
            if not self.training:
                yv, xv = torch.meshgrid(torch.arange(ny), torch.arange(nx), indexing='ij')
                grid = torch.stack((xv, yv), 2).view(1, 1, ny, nx, 2).float()
                y = x[i].sigmoid()
                xy = (y[..., 0:2] * 2. - 0.5 + grid) * self.stride[i]
                wh = (y[..., 2:4] * 2) ** 2 * self.anchor_grid[i]
                y = torch.cat((xy, wh, y[..., 4:]), -1)
                z.append(y.view(bs, -1, self.no))
        return x if self.training else (torch.cat(z, 1), x)


class Model(nn.Module):
    def __init__(self, nc=80):
        super().__init__()
        self.model = nn.Sequential(Conv(3, 16, 3, 2), Conv(16, 32, 3, 2), Conv(32, 32, 3, 2), Detect(nc, ch=(32,)))

    def forward(self, x):
        return self.forward_once(x)

    def forward_once(self, x):
        for m in self.model:
            x = m(x)
        return x


def attempt_load_checkpoint():
    """torch.load('yolov7.pt') stand-in: a checkpoint dict holding the model."""
    torch.manual_seed(0)
    return {'model': Model()}

# ----------------------------- stand-ins: pytorch_grad_cam -----------------------------


class ActivationsAndGradients:
    def __init__(self, model, target_layers, reshape_transform=None):
        self.model, self.gradients, self.activations = model, [], []
        self.handles = [layer.register_forward_hook(self.save_activation) for layer in target_layers] + \
                       [layer.register_forward_hook(self.save_gradient) for layer in target_layers]

    def save_activation(self, module, input, output):
        self.activations.append(output.cpu().detach())

    def save_gradient(self, module, input, output):
        if not hasattr(output, "requires_grad") or not output.requires_grad:
            return

        def _store_grad(grad):
            self.gradients = [grad.cpu().detach()] + self.gradients
        output.register_hook(_store_grad)

    def __call__(self, x):
        self.gradients, self.activations = [], []
        return self.model(x)

    def release(self):
        for handle in self.handles:
            handle.remove()


class ClassifierOutputTarget:
    def __init__(self, category):
        self.category = category

    def __call__(self, model_output):
        if len(model_output.shape) == 1:
            return model_output[self.category]
        return model_output[:, self.category]


class GradCAM:
    def __init__(self, model, target_layers, use_cuda=False):
        self.model = model.eval()
        self.target_layers = target_layers
        self.activations_and_grads = ActivationsAndGradients(self.model, target_layers)

    def get_cam_weights(self, grads):
        return np.mean(grads, axis=(2, 3))

    def forward(self, input_tensor, targets, eigen_smooth=False):
        outputs = self.activations_and_grads(input_tensor)
        if targets is None:
            target_categories = np.argmax(outputs.cpu().data.numpy(), axis=-1)
            targets = [ClassifierOutputTarget(category) for category in target_categories]
        self.model.zero_grad()
        loss = sum([target(output) for target, output in zip(targets, outputs)])
        loss.backward()
        activations = self.activations_and_grads.activations[0].numpy()
        grads = self.activations_and_grads.gradients[0].numpy()
        weights = self.get_cam_weights(grads)
        cam = np.maximum((weights[:, :, None, None] * activations).sum(axis=1), 0)
        return cam / (cam.max(axis=(1, 2), keepdims=True) + 1e-7)

    def __call__(self, input_tensor, targets=None):
        return self.forward(input_tensor, targets)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_value, exc_tb):
        self.activations_and_grads.release()


def preprocess_image(img, mean, std):
    img = (img - np.array(mean)) / np.array(std)
    return torch.from_numpy(np.ascontiguousarray(img.transpose(2, 0, 1))).float().unsqueeze(0)

# ----------------------------- the reporter's script -----------------------------


class YOLOClassScoreTarget:
    """Reduces YOLO's inference output (batch, boxes, 5 + classes) to the summed score of one class."""

    def __init__(self, category):
        self.category = category

    def __call__(self, model_output):
        return (model_output[..., 4] * model_output[..., 5 + self.category]).sum()


device = torch.device("cpu")
weigths = attempt_load_checkpoint()  # torch.load('yolov7.pt')
model = weigths['model']
model = model.to(device)  # .half() on CUDA in the report
_ = model.eval()

img = np.random.RandomState(0).rand(64, 64, 3)  # cv2.resize(np.array(Image.open(image_url)), (224, 224))
img = np.float32(img)
input_tensor = preprocess_image(img, mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])
input_tensor = input_tensor.to(device)

targets = [YOLOClassScoreTarget(1)]
target_layers = [model.model[-2]]
with GradCAM(model=model, target_layers=target_layers) as cam:
    grayscale_cams = cam(input_tensor=input_tensor, targets=targets)
    print(grayscale_cams.shape)
