# Source: https://github.com/Lightning-AI/pytorch-lightning/issues/4487
"""A network whose output is its derivative with respect to the input, trained in a LightningModule,
with the reporter's workaround written scoped: validation_step re-enables gradients
(`with torch.enable_grad():`) around the forward pass, so the autograd.grad inside
Feedforward.forward has a graph even though Lightning validates with gradients disabled.
pytorch_lightning and the data loaders are small stand-ins written here.
"""
import torch
import torch.nn.functional as F


class Feedforward(torch.nn.Module):
    def __init__(self, input_size, hidden_size):
        super(Feedforward, self).__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.fc1 = torch.nn.Linear(self.input_size, self.hidden_size)
        self.relu = torch.nn.ReLU()
        self.fc2 = torch.nn.Linear(self.hidden_size, 1)

    def forward(self, x):
        hidden = self.fc1(x)
        relu = self.relu(hidden)
        output = self.fc2(relu)
        output = output.sum()
        output = torch.autograd.grad(outputs=output, inputs=x, retain_graph=True, create_graph=True)
        return output[0]


class LightningModule(torch.nn.Module):
    """Stand-in for pytorch_lightning.LightningModule."""
    def log(self, name, value):
        self.logged = getattr(self, "logged", {})
        self.logged[name] = float(value)


class Trainer:
    """Stand-in for pytorch_lightning.Trainer (1.0): train epoch, then validation without grad."""
    def __init__(self, max_epochs=1):
        self.max_epochs = max_epochs

    def fit(self, model, train_dataloader, val_dataloaders):
        optimizer = model.configure_optimizers()
        for epoch in range(self.max_epochs):
            model.train()
            for batch_idx, batch in enumerate(train_dataloader()):
                loss = model.training_step(batch, batch_idx)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            model.eval()
            with torch.no_grad():
                for batch_idx, batch in enumerate(val_dataloaders()):
                    model.validation_step(batch, batch_idx)


class DerivativeModel(LightningModule):
    def __init__(self):
        super().__init__()
        self.model = Feedforward(3, 16)

    def forward(self, x):
        return self.model(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = F.mse_loss(self(x), y)
        self.log('train_loss', loss)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        with torch.enable_grad():
            loss = F.mse_loss(self(x), y)
        self.log('val_loss', loss)
        return loss

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)


def loader(n_batches=2):
    def batches():
        for _ in range(n_batches):
            test_input = torch.rand((10, 3), requires_grad=True)
            test_output = torch.rand((10, 3))
            yield test_input, test_output
    return batches


model = DerivativeModel()
trainer = Trainer(max_epochs=2)
trainer.fit(model, train_dataloader=loader(), val_dataloaders=loader())
print(model.logged)
