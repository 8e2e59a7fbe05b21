# Source: https://github.com/1Konny/gradcam_plus_plus-pytorch/issues/7
"""gradcam_plus_plus-pytorch's GradCAM made to take a batch (the issue got no answer; this is the
right fix): GradCAM.forward takes each image's score for its own class with gather and backwards
their sum, a scalar; as the model is in eval mode the images do not interact, so the hooked
gradients are each image's own. A small ResNet-shaped classifier stands in for the torchvision
model, random images for the reporter's batch; the visualisation (cv2) is left out;
register_backward_hook and F.upsample are written with their current names."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def find_resnet_layer(arch, target_layer_name):
    """Find resnet layer to calculate GradCAM and GradCAM++"""
    if 'layer' in target_layer_name:
        hierarchy = target_layer_name.split('_')
        layer_num = int(hierarchy[0].lstrip('layer'))
        target_layer = getattr(arch, 'layer%d' % layer_num)
        if len(hierarchy) >= 2:
            bottleneck_num = int(hierarchy[1].lower().lstrip('bottleneck').lstrip('basicblock'))
            target_layer = target_layer[bottleneck_num]
    else:
        target_layer = arch._modules[target_layer_name]
    return target_layer


class GradCAM(object):
    """Calculate GradCAM salinecy map."""
    def __init__(self, model_dict, verbose=False):
        layer_name = model_dict['layer_name']
        self.model_arch = model_dict['arch']

        self.gradients = dict()
        self.activations = dict()
        def backward_hook(module, grad_input, grad_output):
            self.gradients['value'] = grad_output[0]
            return None
        def forward_hook(module, input, output):
            self.activations['value'] = output
            return None

        target_layer = find_resnet_layer(self.model_arch, layer_name)
        target_layer.register_forward_hook(forward_hook)
        target_layer.register_full_backward_hook(backward_hook)

    def forward(self, input, class_idx=None, retain_graph=False):
        b, c, h, w = input.size()

        logit = self.model_arch(input)
        if class_idx is None:
            class_idx = logit.max(1)[-1]
        else:
            class_idx = torch.full((b,), class_idx, dtype=torch.long)
        # each image's own class score; the images are independent (eval mode), so the sum's
        # gradient at the hooked layer is every image's own gradient
        score = logit.gather(1, class_idx.view(b, 1)).sum()

        self.model_arch.zero_grad()
        score.backward(retain_graph=retain_graph)
        gradients = self.gradients['value']
        activations = self.activations['value']
        b, k, u, v = gradients.size()

        alpha = gradients.view(b, k, -1).mean(2)
        weights = alpha.view(b, k, 1, 1)

        saliency_map = (weights*activations).sum(1, keepdim=True)
        saliency_map = F.relu(saliency_map)
        saliency_map = F.interpolate(saliency_map, size=(h, w), mode='bilinear', align_corners=False)
        saliency_map_min, saliency_map_max = saliency_map.min(), saliency_map.max()
        saliency_map = (saliency_map - saliency_map_min).div(saliency_map_max - saliency_map_min).data

        return saliency_map, logit

    def __call__(self, input, class_idx=None, retain_graph=False):
        return self.forward(input, class_idx, retain_graph)


def stage(cin, cout, stride):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU())


class SmallResNet(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.conv1 = stage(3, 8, 2)
        self.layer1 = stage(8, 8, 1)
        self.layer2 = stage(8, 16, 2)
        self.layer3 = stage(16, 16, 1)
        self.layer4 = stage(16, 32, 2)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(32, num_classes)

    def forward(self, x):
        x = self.layer4(self.layer3(self.layer2(self.layer1(self.conv1(x)))))
        return self.fc(torch.flatten(self.avgpool(x), 1))


resnet = SmallResNet()
resnet.eval()
gradcam = GradCAM(dict(type='resnet', arch=resnet, layer_name='layer4', input_size=(32, 32)))

inputs = torch.randn(4, 3, 32, 32)
mask, _ = gradcam(inputs)
print(mask.shape)
