# Source: https://m.haomeiwen.com/subject/ookkactx.html
"""The FGSM class with the input moved and cast to the device first and requires_grad set on that
tensor (the fix for the post's None gradient; the post itself only says to set requires_grad=True):
the tensor the model sees is a leaf, so `.grad` holds the input gradient after `loss.backward()`.
"""
import torch
import torch.nn as nn
from torch.autograd import Variable


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
        self.fc = nn.Linear(4 * 7 * 7, 10)

    def forward(self, x):
        return self.fc(torch.flatten(self.features(x), 1))


class FGSM:
    def __init__(self, model, criterion, epsilon, device):
        self.model = model
        self.criterion = criterion
        self.epsilon = epsilon
        self.device = device
        assert isinstance(model, torch.nn.Module), "Input parameter model is not nn.Module. Check the model"
        assert isinstance(criterion, torch.nn.Module), "Input parameter criterion is no Loss. Check the criterion"
        assert 0 <= epsilon <= 1, "episilon must be 0 <= epsilon <= 1"
        self.model.eval()

    def __call__(self, input, labels):
        input_for_gradient = Variable(input.to(self.device, torch.float32), requires_grad=True)
        out = self.model(input_for_gradient)
        loss = self.criterion(out, Variable(labels))
        loss.backward()
        grad_sign = input_for_gradient.grad.sign()
        adv = input_for_gradient + self.epsilon * grad_sign
        return torch.clamp(adv, 0, 1).detach()


device = torch.device("cpu")
model = SmallCNN().to(device)
attack = FGSM(model, nn.CrossEntropyLoss(), 0.1, device)
images = torch.rand(8, 1, 14, 14, dtype=torch.float64)
labels = torch.randint(0, 10, (8,))
adv = attack(images, labels)
print((model(adv).argmax(1) == labels).float().mean().item())
