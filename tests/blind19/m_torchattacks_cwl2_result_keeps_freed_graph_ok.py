# Source: https://github.com/Harry24k/adversarial-attacks-pytorch/commit/a4648091bd9b138bb03ddee21fadcba2a57ebcce
"""torchattacks CWL2 (before commit a464809) used for adversarial training.

CWL2.forward optimises `w` with Adam; every step it builds
`adv_images = self.tanh_space(w)`, calls `cost.backward()` (which frees the
saved tensors of that step's graph, e.g. the tanh result) and then copies the
good samples with `best_adv_images[mask] = adv_images[mask]`.  That index_put
makes `best_adv_images` part of the (already freed) graph of w, and the attack
returns it as is.  The user's adversarial-training step then computes a loss
on `model(adv_images)` and calls `loss.backward()`; autograd walks from the
model input back into the attack's graph and reaches TanhBackward whose saved
result was freed: "Trying to backward through the graph a second time".

The commit fixes it by returning `best_adv_images.clone().detach()`; this
file applies that fix (the commit's own fix).
"""
import torch
import torch.nn as nn
import torch.optim as optim


class Attack(object):
    """Small stand-in for torchattacks.attack.Attack (same __call__ flow)."""

    def __init__(self, name, model):
        self.attack = name
        self.model = model
        self.model_name = model.__class__.__name__
        self.device = next(model.parameters()).device
        self.targeted = False
        self._normalization_applied = None
        self._model_training = False

    def forward(self, inputs, labels=None, *args, **kwargs):
        raise NotImplementedError

    def get_logits(self, inputs, labels=None, *args, **kwargs):
        logits = self.model(inputs)
        return logits

    def _change_model_mode(self, given_training):
        if self._model_training:
            self.model.train()
        else:
            self.model.eval()

    def _recover_model_mode(self, given_training):
        if given_training:
            self.model.train()

    def __call__(self, inputs, labels=None, *args, **kwargs):
        given_training = self.model.training
        self._change_model_mode(given_training)
        adv_inputs = self.forward(inputs, labels, *args, **kwargs)
        self._recover_model_mode(given_training)
        return adv_inputs


class CWL2(Attack):
    def __init__(self, model, c=1, kappa=0, steps=50, lr=0.01, abort_early=True):
        super().__init__("CWL2", model)
        self.c = c
        self.kappa = kappa
        self.steps = steps
        self.lr = lr
        self.abort_early = abort_early
        self.supported_mode = ["default", "targeted"]

    def forward(self, images, labels):
        images = images.clone().detach().to(self.device)
        labels = labels.clone().detach().to(self.device)

        target_labels = labels

        w = self.inverse_tanh_space(images).detach()
        w.requires_grad = True

        best_adv_images = images.clone().detach()
        batch_size = len(images)
        best_Lx = torch.full((batch_size, ), 1e10).to(self.device)
        prev_cost = 1e10

        MSELoss = nn.MSELoss(reduction="none")
        Flatten = nn.Flatten()

        optimizer = optim.Adam([w], lr=self.lr)

        for step in range(self.steps):
            # Get adversarial images
            adv_images = self.tanh_space(w)

            # Calculate loss
            current_Lx = MSELoss(Flatten(adv_images),
                                 Flatten(images)).sum(dim=1)

            Lx_loss = current_Lx.sum()

            outputs = self.get_logits(adv_images)
            if self.targeted:
                f_loss = self.f(outputs, target_labels)
            else:
                f_loss = self.f(outputs, labels)

            cost = Lx_loss + torch.sum(self.c * f_loss)

            optimizer.zero_grad()
            cost.backward()
            optimizer.step()

            # Update adversarial images
            pre = torch.argmax(outputs.detach(), 1)
            condition_1 = self.compare(pre, labels, target_labels)
            condition_2 = (current_Lx < best_Lx)

            mask = torch.logical_and(condition_1, condition_2)
            best_Lx[mask] = current_Lx[mask]
            best_adv_images[mask] = adv_images[mask]

            # Early stop when loss does not converge
            if self.abort_early and step % (self.steps // 10) == 0:
                if cost > prev_cost * 0.9999:
                    break
                else:
                    prev_cost = cost

        return best_adv_images.clone().detach()

    def compare(self, predition, labels, target_labels):
        if self.targeted:
            ret = (predition == target_labels)
        else:
            ret = (predition != labels)
        return ret

    def tanh_space(self, x):
        return 1 / 2 * (torch.tanh(x) + 1)

    def inverse_tanh_space(self, x):
        return self.atanh(torch.clamp(x * 2 - 1, min=-1, max=1))

    def atanh(self, x):
        return 0.5 * torch.log((1 + x) / (1 - x))

    def f(self, outputs, labels):
        one_hot_labels = torch.eye(outputs.shape[1]).to(self.device)[labels]
        real = torch.sum(one_hot_labels * outputs, dim=1)
        other = torch.max((1 - one_hot_labels) * outputs - one_hot_labels * 1e12, dim=1)[0]
        if self.targeted:
            return torch.clamp((other - real), min=-self.kappa)
        else:
            return torch.clamp((real - other), min=-self.kappa)


class SmallCNN(nn.Module):
    def __init__(self, num_classes=10):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
        )
        self.classifier = nn.Linear(16, num_classes)

    def forward(self, x):
        return self.classifier(torch.flatten(self.features(x), 1))


def train_adversarial(model, atk, loader, optimizer, epochs=1):
    criterion = nn.CrossEntropyLoss()
    for epoch in range(epochs):
        model.train()
        for images, labels in loader:
            adv_images = atk(images, labels)
            outputs = model(adv_images)
            loss = criterion(outputs, labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        print("epoch", epoch, "loss", loss.item())


def main():
    torch.manual_seed(0)
    model = SmallCNN()
    optimizer = optim.SGD(model.parameters(), lr=0.01)
    atk = CWL2(model, c=1, kappa=0, steps=10, lr=0.01)
    loader = [(torch.rand(8, 3, 16, 16), torch.randint(0, 10, (8,))) for _ in range(2)]
    train_adversarial(model, atk, loader, optimizer)


if __name__ == "__main__":
    main()
