# Source: https://github.com/Lightning-AI/pytorch-lightning/issues/2427
"""A LightningModule whose test_step takes the gradient of the classifier's cross-entropy with
respect to a copy of the test images (`torch.autograd.grad(loss, copied_input)`, for input
gradients/saliency), fine in training_step; Lightning (0.8) runs the test loop with
`torch.set_grad_enabled(False)`, so output and loss have no grad_fn: "element 0 of tensors does not
require grad and does not have a grad_fn". The maintainer's `self.train()` does not help (the
reporter says so); the right fix is `with torch.enable_grad():` in test_step. pytorch_lightning
(LightningModule, Trainer.fit/test) and MNIST are small stand-ins written here.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class LightningModule(nn.Module):
    """Stand-in for pytorch_lightning.LightningModule."""
    def training_epoch_end(self, outputs):
        pass


class Trainer:
    """Stand-in for pytorch_lightning.Trainer (0.8): fit, then test with gradients disabled."""
    def __init__(self, max_epochs=1):
        self.max_epochs = max_epochs

    def fit(self, model, train_dataloader):
        optimizer = model.configure_optimizers()
        model.train()
        for epoch in range(self.max_epochs):
            for batch_idx, batch in enumerate(train_dataloader):
                output = model.training_step(batch, batch_idx)
                optimizer.zero_grad()
                output['loss'].backward()
                optimizer.step()

    def test(self, model, test_dataloaders):
        model.eval()
        # disable gradients to save memory
        torch.set_grad_enabled(False)
        outputs = []
        for batch_idx, batch in enumerate(test_dataloaders):
            outputs.append(model.test_step(batch, batch_idx))
        result = model.test_epoch_end(outputs)
        torch.set_grad_enabled(True)
        model.train()
        return result


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 8, 3, padding=1)
        self.fc = nn.Linear(8 * 7 * 7, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv(x)), 4)
        return self.fc(x.flatten(1))


class GradientModel(LightningModule):
    def __init__(self):
        super().__init__()
        self.classifier = Classifier()
        self.last_imgs = None
        self.last_grad = None

    def criterion_ce(self, y_hat, y):
        return F.cross_entropy(y_hat, y)

    def training_step(self, batch, batch_nb):
        imgs, labels = batch
        loss = self.criterion_ce(self.classifier(imgs), labels)
        return {'loss': loss}

    def test_step(self, batch, batch_nb):
        imgs, labels = batch
        self.last_imgs = imgs

        # get gradients
        self.classifier.eval()
        copied_input = imgs.clone()
        copied_input.requires_grad_(True)
        output = self.classifier(copied_input)
        loss = self.criterion_ce(output, labels)
        gradients = torch.autograd.grad(loss, copied_input)[0]  # expect: GG104
        self.last_grad = gradients
        return {'grad_norm': gradients.norm()}

    def test_epoch_end(self, outputs):
        return {'mean_grad_norm': torch.stack([o['grad_norm'] for o in outputs]).mean()}

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)


def mnist_batches(n):
    return [(torch.rand(4, 1, 28, 28), torch.randint(0, 10, (4,))) for _ in range(n)]


model = GradientModel()
trainer = Trainer(max_epochs=1)
trainer.fit(model, mnist_batches(3))
print(trainer.test(model, test_dataloaders=mnist_batches(2)))
