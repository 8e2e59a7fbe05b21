# Source: https://github.com/Lightning-AI/pytorch-lightning/issues/19910
"""The reporter's Jacobian-in-evaluation module with the answer the issue got: the Trainer is built
with `inference_mode=False`, so trainer.test runs test_step under torch.no_grad(), which the
step's `with torch.enable_grad():` lifts, and autograd.grad gets a graph. A minimal Trainer with
Lightning's loops and evaluation context stands in for pytorch_lightning, random regression
batches for the reporter's data."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class JacobianModule(nn.Module):
    def __init__(self, n=5):
        super().__init__()
        self.net = nn.Linear(n, n)

    def jacobian_norm(self):
        with torch.enable_grad():
            N = 5
            f = lambda x: x ** 2
            x = torch.randn(N, requires_grad=True)
            y = f(x)
            I_N = torch.eye(N)
            # Sequential approach
            jacobian_rows = [torch.autograd.grad(y, x, v, retain_graph=True, allow_unused=True)[0]
                             for v in I_N.unbind()]
            jacobian = torch.stack(jacobian_rows)
        return jacobian.norm()

    def training_step(self, batch, batch_idx):
        x, y = batch
        return F.mse_loss(self.net(x), y)

    def validation_step(self, batch, batch_idx):
        x, y = batch
        return {"val_loss": F.mse_loss(self.net(x), y), "jac": self.jacobian_norm()}

    def test_step(self, batch, batch_idx):
        x, y = batch
        return {"test_loss": F.mse_loss(self.net(x), y), "jac": self.jacobian_norm()}

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


class Trainer:
    """Lightning's loops, reduced: fit trains then validates; validate and test run the module's
    step under the evaluation context."""

    def __init__(self, max_epochs=1, inference_mode=True):
        self.max_epochs = max_epochs
        self.inference_mode = inference_mode

    def _evaluation_context(self):
        return torch.inference_mode() if self.inference_mode else torch.no_grad()

    def fit(self, model, train_dataloaders, val_dataloaders):
        optimizer = model.configure_optimizers()
        for epoch in range(self.max_epochs):
            model.train()
            for batch_idx, batch in enumerate(train_dataloaders):
                loss = model.training_step(batch, batch_idx)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            model.eval()
            with torch.no_grad():
                for batch_idx, batch in enumerate(val_dataloaders):
                    print(model.validation_step(batch, batch_idx))

    def test(self, model, dataloaders):
        model.eval()
        with self._evaluation_context():
            for batch_idx, batch in enumerate(dataloaders):
                print(model.test_step(batch, batch_idx))


def batches(n=2):
    return [(torch.randn(4, 5), torch.randn(4, 5)) for _ in range(n)]


model = JacobianModule()
trainer = Trainer(max_epochs=1, inference_mode=False)
trainer.fit(model, train_dataloaders=batches(), val_dataloaders=batches())
trainer.test(model, dataloaders=batches())
