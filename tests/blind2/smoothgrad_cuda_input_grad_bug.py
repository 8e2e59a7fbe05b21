# Source: https://github.com/pkmr06/pytorch-smoothgrad/issues/5
"""pytorch-smoothgrad's saliency.py run with --cuda: preprocess_image() wraps the image in
Variable(..., requires_grad=True) and only then moves it with .cuda(), so the tensor handed to
VanillaGrad is the (non-leaf) result of the move. After the backward, VanillaGrad reads x.grad,
which is None ("AttributeError: 'NoneType' object has no attribute 'data'"). This CPU-only copy
moves tensor and model with .double() where the script calls .cuda(): a cast that autograd
records the same way. VanillaGrad's retain_graph=True keeps a graph that nothing walks again. A
small conv net replaces the pretrained VGG19, a random image the raccoon."""
import numpy as np
import torch
import torch.nn as nn
from torch.autograd import Variable


def preprocess_image(img, cuda=False):
    means = [0.485, 0.456, 0.406]
    stds = [0.229, 0.224, 0.225]

    preprocessed_img = img.copy()[:, :, ::-1]
    for i in range(3):
        preprocessed_img[:, :, i] = preprocessed_img[:, :, i] - means[i]
        preprocessed_img[:, :, i] = preprocessed_img[:, :, i] / stds[i]
    preprocessed_img = np.ascontiguousarray(np.transpose(preprocessed_img, (2, 0, 1)))
    preprocessed_img = torch.from_numpy(preprocessed_img)
    preprocessed_img.unsqueeze_(0)
    preprocessed_img = Variable(preprocessed_img, requires_grad=True)
    if cuda:
        preprocessed_img = preprocessed_img.double()  # .cuda() in the script

    return preprocessed_img


class VanillaGrad(object):

    def __init__(self, pretrained_model, cuda=False):
        self.pretrained_model = pretrained_model
        self.features = pretrained_model.features
        self.cuda = cuda

    def __call__(self, x, index=None):
        output = self.pretrained_model(x)

        if index is None:
            index = np.argmax(output.data.cpu().numpy())

        one_hot = np.zeros((1, output.size()[-1]), dtype=np.float32)
        one_hot[0][index] = 1
        one_hot = Variable(torch.from_numpy(one_hot), requires_grad=True)
        if self.cuda:
            one_hot = one_hot.double()
        one_hot = torch.sum(one_hot * output)

        one_hot.backward(retain_graph=True)  # expect: GG203

        grad = x.grad.data.cpu().numpy()  # expect: GG106
        grad = grad[0, :, :, :]

        return grad


class VGG(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
        self.classifier = nn.Linear(8 * 8 * 8, 10)

    def forward(self, x):
        return self.classifier(self.features(x).flatten(1))


cuda = True
img = np.float32(np.random.rand(16, 16, 3))
preprocessed_img = preprocess_image(img, cuda)

model = VGG()
if cuda:
    model.double()

output = model(preprocessed_img)
pred_index = np.argmax(output.data.cpu().numpy())
print('Prediction: {}'.format(pred_index))

vanilla_grad = VanillaGrad(pretrained_model=model, cuda=cuda)
vanilla_saliency = vanilla_grad(preprocessed_img, index=None)
print('vanilla gradient', vanilla_saliency.shape)
