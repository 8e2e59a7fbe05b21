# Source: https://github.com/marshuang80/gloria/issues/19
"""GLoRIA's SIIM segmentation fine-tuning under Lightning's dp accelerator with the fix
Lightning documents for dp (the thread has no answer): the module's training_step_end averages the
per-GPU losses the dp gather stacked, so the training loop backwards a scalar."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class FocalLoss(nn.Module):
    def __init__(self, gamma=2.0):
        super().__init__()
        self.gamma = gamma

    def forward(self, input, target):
        max_val = (-input).clamp(min=0)
        loss = input - input * target + max_val + ((-max_val).exp() + (-input - max_val).exp()).log()
        invprobs = F.logsigmoid(-input * (target * 2.0 - 1.0))
        loss = (invprobs * self.gamma).exp() * loss
        return loss.mean()


def dice_loss(input, target):
    input = torch.sigmoid(input)
    smooth = 1.0
    iflat = input.view(-1)
    tflat = target.view(-1)
    intersection = (iflat * tflat).sum()
    return (2.0 * intersection + smooth) / (iflat.sum() + tflat.sum() + smooth)


class MixedLoss(nn.Module):
    def __init__(self, alpha=10.0):
        super().__init__()
        self.alpha = alpha
        self.focal = FocalLoss(2.0)

    def forward(self, input, target):
        loss = self.alpha * self.focal(input, target) - torch.log(dice_loss(input, target))
        return loss.mean()


class Unet(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
        self.mid = nn.Sequential(nn.Conv2d(8, 8, 3, padding=1), nn.ReLU())
        self.dec = nn.Sequential(nn.Upsample(scale_factor=2), nn.Conv2d(8, 1, 3, padding=1))

    def forward(self, x):
        return self.dec(self.mid(self.enc(x)))


class SegmentationModel(nn.Module):
    """Stand-in for gloria.lightning.SegmentationModel (a LightningModule)."""

    def __init__(self, lr=5e-4):
        super().__init__()
        self.model = Unet()
        self.lr = lr
        self.loss = MixedLoss(alpha=10)

    def configure_optimizers(self):
        return torch.optim.Adam(self.model.parameters(), lr=self.lr)

    def forward(self, x):
        return self.model(x)

    def training_step(self, batch, batch_idx):
        return self.shared_step(batch, "train")

    def shared_step(self, batch, split):
        x, y = batch["image"], batch["mask"]
        logit = self.model(x)
        logit = logit.squeeze(dim=1)
        loss = self.loss(logit, y)
        return {"loss": loss}

    def training_step_end(self, outputs):
        return {k: v.mean() for k, v in outputs.items()}


class LightningDataParallel(nn.Module):
    """Stand-in for Lightning's dp wrapper: scatter the batch, run training_step per replica, gather."""

    def __init__(self, module, n_devices):
        super().__init__()
        self.module = module
        self.n_devices = n_devices

    def forward(self, batch, batch_idx):
        chunks = [{k: v.chunk(self.n_devices)[i] for k, v in batch.items()} for i in range(self.n_devices)]
        outputs = [self.module.training_step(chunk, batch_idx) for chunk in chunks]
        return {k: torch.stack([o[k] for o in outputs]) for k in outputs[0]}


class Trainer:
    def __init__(self, gpus=2, accelerator="dp", max_epochs=1):
        self.gpus = gpus
        self.accelerator = accelerator
        self.max_epochs = max_epochs

    def fit(self, model, train_dataloader):
        optimizer = model.configure_optimizers()
        runner = LightningDataParallel(model, self.gpus) if self.accelerator == "dp" else None
        for epoch in range(self.max_epochs):
            for batch_idx, batch in enumerate(train_dataloader):
                if runner is not None:
                    output = runner(batch, batch_idx)
                else:
                    output = model.training_step(batch, batch_idx)
                if hasattr(model, "training_step_end"):
                    output = model.training_step_end(output)
                loss = output["loss"]
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()


def siim_loader(n_batches=2, batch_size=4, size=16):
    return [{"image": torch.randn(batch_size, 3, size, size),
             "mask": (torch.rand(batch_size, size, size) > 0.8).float()} for _ in range(n_batches)]


if __name__ == "__main__":
    model = SegmentationModel()
    trainer = Trainer(gpus=2, accelerator="dp", max_epochs=1)
    trainer.fit(model, siim_loader())
