# Source: https://m.haomeiwen.com/subject/ookkactx.html
"""The Jianshu-mirror post on FGSM: the gradient of the loss w.r.t. the input stays None although
requires_grad was set. Its FGSM class builds `input_for_gradient = Variable(input,
requires_grad=True).to(self.device)`: the `.to` makes a new, non-leaf tensor, so after
`loss.backward()` reading `input_for_gradient.grad` warns and gives None, and `.sign()` on it
raises. Here the images arrive as float64 and `.to(self.device, torch.float32)` casts (on a GPU the
device move alone does it). Fix: move/cast first, then set requires_grad on the tensor the model sees.
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
        input_for_gradient = Variable(input, requires_grad=True).to(self.device, torch.float32)
        out = self.model(input_for_gradient)
        loss = self.criterion(out, Variable(labels))
        loss.backward()
        grad_sign = input_for_gradient.grad.sign()  # expect: GG106
        adv = input_for_gradient + self.epsilon * grad_sign
        return torch.clamp(adv, 0, 1).detach()


device = torch.device("cpu")
model = SmallCNN().to(device)
attack = FGSM(model, nn.CrossEntropyLoss(), 0.1, device)
images = torch.rand(8, 1, 14, 14, dtype=torch.float64)
labels = torch.randint(0, 10, (8,))
adv = attack(images, labels)
print((model(adv).argmax(1) == labels).float().mean().item())
