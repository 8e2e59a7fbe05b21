# Source: https://github.com/anishmadan23/adversarial-attacks-pytorch/issues/1
"""The FGSM evaluation loop with the image moved to the device before it is marked
`requires_grad_(True)`, the order of the repository's main1.py (the thread has no answer): the
tensor handed to FGSM is then the leaf itself and its .grad holds the input gradient."""
import torch
import torch.nn as nn
import torch.nn.functional as F

device = torch.device('cpu')


def getPredictionInfo(model, img):
    output = model(img)
    op_probs = F.softmax(output, dim=1)
    pred_prob = ((torch.max(op_probs.data, 1)[0][0]) * 100, 4)
    _, pred = torch.max(output.data, 1)
    return output, pred, op_probs, pred_prob


class FGSM(object):
    def __init__(self, model, criterion, orig_img, orig_label, eps):
        self.model = model
        self.criterion = criterion
        self.orig_img = orig_img
        self.epsilon = eps
        self.orig_label = orig_label

    def attack(self):
        output, pred, op_probs, pred_prob = getPredictionInfo(self.model, self.orig_img)
        loss = self.criterion(output, self.orig_label)
        loss.backward()
        img_grad = torch.sign(self.orig_img.grad.data)
        adv_img = self.orig_img.data + self.epsilon*img_grad
        return adv_img, img_grad


def get_model(device):
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                          nn.Flatten(), nn.Linear(16, 10))
    return model.to(device)


model = get_model(device)
model.eval()
epsilon_arr = [0.005, 0.05]
images = [(torch.rand(3, 32, 32), label) for label in (3, 7, 1)]

for epsilon in epsilon_arr:
    misclassified = 0
    for img, label in images:
        img_tsor = img.clone()
        img_tsor.unsqueeze_(0)
        img_tsor = img_tsor.to(device, copy=True)
        img_tsor.requires_grad_(True)

        label = torch.tensor([label], requires_grad=False)
        label = label.to(device)

        criterion = nn.CrossEntropyLoss()
        model.zero_grad()
        fgsm = FGSM(model, criterion, img_tsor, label, epsilon)
        fg_adv_img, fg_perturbation = fgsm.attack()
        fg_output_adv, fg_pred_adv, fg_op_adv_probs, fg_adv_pred_prob = getPredictionInfo(model, fg_adv_img)
        misclassified += int(fg_pred_adv.item() != label.item())
    print('Top 1 FGSM Accuracy :', 1 - misclassified / len(images))
