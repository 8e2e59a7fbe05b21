# Source: https://github.com/jacobgil/pytorch-grad-cam/issues/187
"""Fixed twin of q_gradcam_cam_called_under_no_grad_bug.py. The reporter ran pytorch-grad-cam's
`GradCAM` on their fine-tuned ResNet inside `with torch.no_grad():`, so the forward recorded no
graph and `loss.backward()` in `BaseCAM.forward` raised "element 0 of tensors does
not require grad and does not have a grad_fn". Fix (the right one; gradient-based CAMs need
autograd): the image loop calls the CAM with grad enabled. pytorch-grad-cam, the ResNet and the
images are small stand-ins written in the file.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

# ----------------------------- stand-ins: torchvision ResNet -----------------------------


class BasicBlock(nn.Module):
    def __init__(self, cin, cout, stride=1):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(cout)
        self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout)) \
            if stride != 1 or cin != cout else nn.Identity()

    def forward(self, x):
        out = F.relu(self.bn1(self.conv1(x)))
        return F.relu(self.bn2(self.conv2(out)) + self.down(x))


class ResNet(nn.Module):
    def __init__(self, num_classes=1000):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, 2, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(8)
        self.layer1 = nn.Sequential(BasicBlock(8, 8))
        self.layer4 = nn.Sequential(BasicBlock(8, 16, 2), BasicBlock(16, 16))
        self.fc = nn.Linear(16, num_classes)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        x = self.layer4(self.layer1(x))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


def resnet152(pretrained=False):
    return ResNet()

# ----------------------------- stand-ins: pytorch_grad_cam -----------------------------


class ActivationsAndGradients:
    def __init__(self, model, target_layers):
        self.model, self.gradients, self.activations = model, [], []
        self.handles = [layer.register_forward_hook(self.save_activation) for layer in target_layers] + \
                       [layer.register_forward_hook(self.save_gradient) for layer in target_layers]

    def save_activation(self, module, input, output):
        self.activations.append(output.cpu().detach())

    def save_gradient(self, module, input, output):
        if not hasattr(output, "requires_grad") or not output.requires_grad:
            # You can only register hooks on tensor requires grad.
            return

        def _store_grad(grad):
            self.gradients = [grad.cpu().detach()] + self.gradients
        output.register_hook(_store_grad)

    def __call__(self, x):
        self.gradients, self.activations = [], []
        return self.model(x)


class ClassifierOutputTarget:
    def __init__(self, category):
        self.category = category

    def __call__(self, model_output):
        return model_output[self.category]


class GradCAM:
    def __init__(self, model, target_layers, use_cuda=False):
        self.model = model.eval()
        self.target_layers = target_layers
        self.activations_and_grads = ActivationsAndGradients(self.model, target_layers)

    def get_cam_weights(self, grads):
        return np.mean(grads, axis=(2, 3))

    def forward(self, input_tensor, targets=None):
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


def preprocess_image(img, mean, std):
    img = (img - np.array(mean)) / np.array(std)
    return torch.from_numpy(np.ascontiguousarray(img.transpose(2, 0, 1))).float().unsqueeze(0)

# ----------------------------- the reporter's script -----------------------------


torch.manual_seed(0)
np.random.seed(0)
resnet = resnet152(pretrained=False)
resnet.fc = torch.nn.Linear(16, 23)

model = resnet
# model.load_state_dict(torch.load(os.path.join(weights_path, '79bestModel.pth'))['net'])
model.eval()
cam = GradCAM(model=model, target_layers=[model.layer4[-1]], use_cuda=False)

criterion = nn.CrossEntropyLoss()
optimizer = optim.SGD(model.parameters(), lr=0.01, momentum=0.9, weight_decay=5e-4)
scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=20)

imgs = [np.random.rand(32, 32, 3) for _ in range(3)]  # cv2.imread(...)[:, :, ::-1] of each PNG
results = []
for i, img in enumerate(imgs):
    img_ori = np.float32(img)
    input_tensor = preprocess_image(img_ori, mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225])
    grayscale_cam = cam(input_tensor=input_tensor, targets=None)
    results.append(grayscale_cam[0, :])
print(len(results), results[0].shape)
