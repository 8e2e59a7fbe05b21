# Source: https://github.com/nianticlabs/monodepth2/issues/24
"""monodepth2's Trainer as published: val() runs process_batch under torch.no_grad() and only
computes the losses (the maintainers: no_grad is for validation, which must not update weights)."""
import torch
import torch.nn as nn


class Trainer:
    def __init__(self):
        self.models = {"encoder": nn.Conv2d(3, 4, 3, padding=1), "depth": nn.Conv2d(4, 1, 3, padding=1)}
        self.parameters_to_train = [p for m in self.models.values() for p in m.parameters()]
        self.model_optimizer = torch.optim.Adam(self.parameters_to_train, 1e-4)

    def set_train(self):
        for m in self.models.values():
            m.train()

    def set_eval(self):
        for m in self.models.values():
            m.eval()

    def process_batch(self, inputs):
        features = self.models["encoder"](inputs["color"])
        disp = torch.sigmoid(self.models["depth"](features))
        losses = {"loss": (disp - inputs["target"]).abs().mean()}
        return disp, losses

    def run_epoch(self, loader):
        self.set_train()
        for inputs in loader:
            outputs, losses = self.process_batch(inputs)
            self.model_optimizer.zero_grad()
            losses["loss"].backward()
            self.model_optimizer.step()
            self.val(inputs)

    def val(self, inputs):
        """Validate the model on a single minibatch"""
        self.set_eval()
        with torch.no_grad():
            outputs, losses = self.process_batch(inputs)
            print("val loss", losses["loss"].item())
        self.set_train()


loader = [{"color": torch.rand(2, 3, 8, 8), "target": torch.rand(2, 1, 8, 8)} for _ in range(2)]
Trainer().run_epoch(loader)
