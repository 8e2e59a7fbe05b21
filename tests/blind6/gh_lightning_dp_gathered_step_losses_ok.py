# Source: https://github.com/Lightning-AI/pytorch-lightning/issues/4073
"""PyTorch Lightning in dp mode with the reduction the maintainers point to: training_step_end
receives the outputs gathered from the two replicas and returns their mean, so the trainer
backwards a scalar. Same BoringModel, two-replica scatter/gather stand-in and fit loop."""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


class RandomDataset(Dataset):
    def __init__(self, size, length):
        self.len = length
        self.data = torch.randn(length, size)

    def __getitem__(self, index):
        return self.data[index]

    def __len__(self):
        return self.len


class BoringModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(32, 2)

    def forward(self, x):
        return self.layer(x)

    def loss(self, batch, prediction):
        return torch.nn.functional.mse_loss(prediction, torch.ones_like(prediction))

    def training_step(self, batch, batch_idx):
        output = self.layer(batch)
        loss = self.loss(batch, output)
        return {"loss": loss}

    def training_step_end(self, outputs):
        return {"loss": outputs["loss"].mean()}

    def configure_optimizers(self):
        return torch.optim.SGD(self.layer.parameters(), lr=0.1)

    def train_dataloader(self):
        return DataLoader(RandomDataset(32, 16), batch_size=8)


class LightningDataParallel:
    """Scatter the batch over the replicas, run training_step on each, gather the outputs."""

    def __init__(self, module, n_devices=2):
        self.module = module
        self.n_devices = n_devices

    def __call__(self, batch, batch_idx):
        outputs = [self.module.training_step(chunk, batch_idx) for chunk in batch.chunk(self.n_devices)]
        return {key: torch.stack([out[key] for out in outputs]) for key in outputs[0]}


class Trainer:
    def __init__(self, max_epochs=1, gpus=2):
        self.max_epochs = max_epochs
        self.gpus = gpus

    def fit(self, model):
        optimizer = model.configure_optimizers()
        dp_model = LightningDataParallel(model, self.gpus)
        for epoch in range(self.max_epochs):
            for batch_idx, batch in enumerate(model.train_dataloader()):
                output = model.training_step_end(dp_model(batch, batch_idx))
                optimizer.zero_grad()
                output["loss"].backward()
                optimizer.step()
                print(epoch, batch_idx, output["loss"].item())


torch.manual_seed(0)
Trainer(max_epochs=2, gpus=2).fit(BoringModel())
