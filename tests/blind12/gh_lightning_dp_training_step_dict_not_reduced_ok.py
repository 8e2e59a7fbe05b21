# Source: https://github.com/Lightning-AI/pytorch-lightning/issues/6193
"""The reporter's BoringModel on the dp accelerator with the fix given in the report: training_step
returns the loss tensor itself, which the dp accelerator's training_step_end averages over the
replicas, so backward() runs on a scalar. Lightning's Trainer, the dp accelerator and
DataParallel's scatter/gather are small single-process stand-ins written here.
"""
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class RandomDataset(Dataset):
    def __init__(self, size, length):
        self.len = length
        self.data = torch.randn(length, size)

    def __getitem__(self, index):
        return self.data[index]

    def __len__(self):
        return self.len


class LightningModule(nn.Module):
    """Stand-in for pytorch_lightning.LightningModule."""
    def training_step_end(self, output):
        return output


class BoringModel(LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(32, 2)

    def forward(self, x):
        return self.layer(x)

    def loss(self, batch, prediction):
        # An arbitrary loss to have a loss that updates the model weights during `Trainer.fit` calls
        return torch.nn.functional.mse_loss(prediction, torch.ones_like(prediction))

    def training_step(self, batch, batch_idx):
        output = self.layer(batch)
        loss = self.loss(batch, output)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.layer.parameters(), lr=0.1)


def dp_scatter_gather(module, batch, batch_idx, num_gpus):
    """Stand-in for LightningDataParallel: one replica per batch chunk, outputs gathered per key."""
    outputs = [module.training_step(chunk, batch_idx) for chunk in batch.chunk(num_gpus)]
    if isinstance(outputs[0], dict):
        return {k: torch.stack([o[k] for o in outputs]) for k in outputs[0]}
    return torch.stack(outputs)


class DataParallelAccelerator:
    def __init__(self, num_gpus):
        self.num_gpus = num_gpus

    def training_step(self, model, batch, batch_idx):
        return dp_scatter_gather(model, batch, batch_idx, self.num_gpus)

    def reduce(self, output):
        if isinstance(output, torch.Tensor):
            output = output.mean()
        return output

    def training_step_end(self, model, output):
        if type(model).training_step_end is LightningModule.training_step_end:
            return self.reduce(output)
        return model.training_step_end(output)


class Trainer:
    """Stand-in for pl.Trainer(gpus=2, accelerator='dp') with automatic optimisation."""
    def __init__(self, gpus, accelerator, max_epochs=1, limit_train_batches=2):
        assert accelerator == "dp"
        self.accelerator_backend = DataParallelAccelerator(gpus)
        self.max_epochs, self.limit_train_batches = max_epochs, limit_train_batches

    def fit(self, model, train_dataloader):
        optimizer = model.configure_optimizers()
        for epoch in range(self.max_epochs):
            for batch_idx, batch in enumerate(train_dataloader):
                if batch_idx >= self.limit_train_batches:
                    break
                output = self.accelerator_backend.training_step(model, batch, batch_idx)
                output = self.accelerator_backend.training_step_end(model, output)
                closure_loss = output["loss"] if isinstance(output, dict) else output
                optimizer.zero_grad()
                closure_loss.backward()
                optimizer.step()


train_data = DataLoader(RandomDataset(32, 64), batch_size=8)
model = BoringModel()
trainer = Trainer(gpus=2, accelerator="dp", max_epochs=1)
trainer.fit(model, train_data)
