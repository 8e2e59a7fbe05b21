# Source: https://github.com/jacobgil/pytorch-grad-cam/issues/109
"""pytorch-grad-cam (July 2021) on a segmentation U-Net, reduced to a scalar as the maintainer
advised ("Average the scores for the category"): the model given to GradCAM is wrapped so that
it returns each category's score averaged over the image, (N, C) like a classifier, so
BaseCAM.get_loss adds one number per image. A small attention U-Net stands in for the reporter's
model, random images for theirs; the library's classes are kept, with cv2.resize done by
F.interpolate, register_backward_hook written as register_full_backward_hook, and the
library's retain_graph=True, whose graph nothing walks again here, left out."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class ActivationsAndGradients:
    """ Class for extracting activations and
    registering gradients from targetted intermediate layers """

    def __init__(self, model, target_layer, reshape_transform):
        self.model = model
        self.gradients = []
        self.activations = []
        self.reshape_transform = reshape_transform
        target_layer.register_forward_hook(self.save_activation)
        target_layer.register_full_backward_hook(self.save_gradient)

    def save_activation(self, module, input, output):
        activation = output
        if self.reshape_transform is not None:
            activation = self.reshape_transform(activation)
        self.activations.append(activation.cpu().detach())

    def save_gradient(self, module, grad_input, grad_output):
        grad = grad_output[0]
        if self.reshape_transform is not None:
            grad = self.reshape_transform(grad)
        self.gradients = [grad.cpu().detach()] + self.gradients

    def __call__(self, x):
        self.gradients = []
        self.activations = []
        return self.model(x)


class BaseCAM:
    def __init__(self, model, target_layer, use_cuda=False, reshape_transform=None):
        self.model = model.eval()
        self.target_layer = target_layer
        self.reshape_transform = reshape_transform
        self.activations_and_grads = ActivationsAndGradients(self.model, target_layer, reshape_transform)

    def get_loss(self, output, target_category):
        loss = 0
        for i in range(len(target_category)):
            loss = loss + output[i, target_category[i]]
        return loss

    def get_cam_image(self, input_tensor, target_category, activations, grads):
        weights = self.get_cam_weights(input_tensor, target_category, activations, grads)
        weighted_activations = weights[:, :, None, None] * activations
        return weighted_activations.sum(axis=1)

    def forward(self, input_tensor, target_category=None):
        output = self.activations_and_grads(input_tensor)

        if type(target_category) is int:
            target_category = [target_category] * input_tensor.size(0)

        if target_category is None:
            target_category = np.argmax(output.cpu().data.numpy(), axis=-1)
        else:
            assert(len(target_category) == input_tensor.size(0))

        self.model.zero_grad()
        loss = self.get_loss(output, target_category)
        loss.backward()

        activations = self.activations_and_grads.activations[-1].cpu().data.numpy()
        grads = self.activations_and_grads.gradients[-1].cpu().data.numpy()
        cam = self.get_cam_image(input_tensor, target_category, activations, grads)
        cam = np.maximum(cam, 0)

        result = []
        for img in cam:
            img = F.interpolate(torch.from_numpy(img)[None, None], size=input_tensor.shape[-2:])[0, 0].numpy()
            img = img - np.min(img)
            img = img / (np.max(img) + 1e-7)
            result.append(img)
        return np.float32(result)

    def __call__(self, input_tensor, target_category=None):
        return self.forward(input_tensor, target_category)


class GradCAM(BaseCAM):
    def get_cam_weights(self, input_tensor, target_category, activations, grads):
        return np.mean(grads, axis=(2, 3))


def conv_block(ch_in, ch_out):
    return nn.Sequential(nn.Conv2d(ch_in, ch_out, 3, padding=1), nn.BatchNorm2d(ch_out), nn.ReLU())


class Attention_block(nn.Module):
    def __init__(self, F_g, F_l, F_int):
        super().__init__()
        self.W_g = nn.Sequential(nn.Conv2d(F_g, F_int, 1), nn.BatchNorm2d(F_int))
        self.W_x = nn.Sequential(nn.Conv2d(F_l, F_int, 1), nn.BatchNorm2d(F_int))
        self.psi = nn.Sequential(nn.Conv2d(F_int, 1, 1), nn.BatchNorm2d(1), nn.Sigmoid())
        self.relu = nn.ReLU()

    def forward(self, g, x):
        psi = self.psi(self.relu(self.W_g(g) + self.W_x(x)))
        return x * psi


class AttU_Net(nn.Module):
    def __init__(self, img_ch=3, output_ch=2):
        super().__init__()
        self.Maxpool = nn.MaxPool2d(2)
        self.Conv1 = conv_block(img_ch, 8)
        self.Conv2 = conv_block(8, 16)
        self.Conv3 = conv_block(16, 32)
        self.Up3 = nn.Upsample(scale_factor=2)
        self.Att3 = Attention_block(32, 16, 8)
        self.Up_conv3 = conv_block(48, 16)
        self.Up2 = nn.Upsample(scale_factor=2)
        self.Att2 = Attention_block(16, 8, 4)
        self.Up_conv2 = conv_block(24, 8)
        self.Conv_1x1 = nn.Conv2d(8, output_ch, 1)

    def forward(self, x):
        x1 = self.Conv1(x)
        x2 = self.Conv2(self.Maxpool(x1))
        x3 = self.Conv3(self.Maxpool(x2))
        d3 = self.Up3(x3)
        d3 = self.Up_conv3(torch.cat((self.Att3(d3, x2), d3), dim=1))
        d2 = self.Up2(d3)
        d2 = self.Up_conv2(torch.cat((self.Att2(d2, x1), d2), dim=1))
        return self.Conv_1x1(d2)


class CategoryMeanScores(nn.Module):
    """Each category's score averaged over the image: one number per category, like a classifier."""
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return self.model(x).mean(dim=(2, 3))


model1 = AttU_Net()
cam = GradCAM(model=CategoryMeanScores(model1), target_layer=model1.Conv3)
input_tensor = torch.randn(1, 3, 32, 32)
grayscale_cam = cam(input_tensor=input_tensor, target_category=1)
print(grayscale_cam.shape)
