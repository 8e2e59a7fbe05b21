# Source: https://github.com/aramis-lab/clinicadl/pull/653
"""clinicadl PR #653 "remove none in implemented reductions": "It is not possible to call
`.backward()` on non-scalar."  ClinicaDL's new loss module (``clinicadl/losses``) builds the
training criterion from a pydantic ``LossConfig``; its ``Reduction`` enum accepted ``"none"``
next to ``"mean"`` and ``"sum"``, and ``get_loss_function`` passes the value straight to the
torch loss class.  With ``reduction="none"`` the criterion returns one value per voxel, the
network's ``compute_outputs_and_loss`` puts that tensor in ``loss_dict["loss"]`` and the
trainer's epoch loop calls ``loss.backward()`` on it: torch raises "grad can be implicitly
created only for scalar outputs".

Fix (the PR): drop ``NONE`` from the supported reductions so the config rejects it.  This file
wires the loss factory into a training loop the way the PR anticipates (at that commit the
trainer still built its criterion elsewhere).  Stand-ins: the config as a plain class with the
same enum validation, ``get_loss_function`` as in ``clinicadl/losses/factory.py``, a tiny 2-D
convolutional ``AutoEncoder`` with ClinicaDL's ``compute_outputs_and_loss``, and the trainer's
loop (``model.zero_grad()``, ``loss_dict["loss"].backward()``, accumulation, ``optimizer.step()``);
random images.
"""
import inspect
from copy import deepcopy
from enum import Enum

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


# ---- stand-ins for clinicadl.utils.factories / clinicadl.losses ----
class DefaultFromLibrary(str, Enum):
    YES = "DefaultFromLibrary"


def get_args_and_defaults(func):
    signature = inspect.signature(func)
    args = list(signature.parameters.keys())
    defaults = {
        k: v.default
        for k, v in signature.parameters.items()
        if v.default is not inspect.Parameter.empty
    }
    return args, defaults


class ImplementedLoss(str, Enum):
    L1 = "L1Loss"
    MSE = "MSELoss"
    HUBER = "HuberLoss"
    SMOOTH_L1 = "SmoothL1Loss"


class Reduction(str, Enum):
    """Supported reduction method in ClinicaDL."""

    NONE = "none"
    MEAN = "mean"
    SUM = "sum"


class LossConfig:
    def __init__(self, loss="MSELoss", reduction=DefaultFromLibrary.YES, delta=DefaultFromLibrary.YES):
        self.loss = ImplementedLoss(loss).value
        self.reduction = reduction if reduction == DefaultFromLibrary.YES else Reduction(reduction).value
        self.delta = delta

    def model_dump(self):
        return {"loss": self.loss, "reduction": self.reduction, "delta": self.delta}


def get_loss_function(config):
    loss_class = getattr(torch.nn, config.loss)
    expected_args, config_dict = get_args_and_defaults(loss_class.__init__)
    for arg, value in config.model_dump().items():
        if arg in expected_args and value != DefaultFromLibrary.YES:
            config_dict[arg] = value
    config_dict_ = deepcopy(config_dict)
    loss = loss_class(**config_dict_)
    return loss, config_dict


# ---- stand-in for clinicadl.network.sub_network.AutoEncoder ----
class AutoEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv2d(1, 4, 3, stride=2, padding=1), nn.ReLU())
        self.decoder = nn.Sequential(nn.ConvTranspose2d(4, 1, 4, stride=2, padding=1), nn.Sigmoid())

    def predict(self, x):
        return self.decoder(self.encoder(x))

    def compute_outputs_and_loss(self, input_dict, criterion, use_labels=True):
        images = input_dict["image"]
        train_output = self.predict(images)
        loss = criterion(train_output, images)
        return train_output, {"loss": loss}


class RandomImages(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, idx):
        return {"image": torch.rand(1, 16, 16), "label": idx % 2}


# ---- experiment: MSE reconstruction loss, reduction chosen in the config ----
loss_config = LossConfig(loss="MSELoss", reduction="none")
criterion, _ = get_loss_function(loss_config)

model = AutoEncoder()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
train_loader = DataLoader(RandomImages(), batch_size=4, shuffle=True)
accumulation_steps = 1

for epoch in range(2):
    model.zero_grad()
    for i, data in enumerate(train_loader):
        _, loss_dict = model.compute_outputs_and_loss(data, criterion)
        loss = loss_dict["loss"]
        loss.backward()  # expect: GG105
        if (i + 1) % accumulation_steps == 0:
            optimizer.step()
            optimizer.zero_grad()
    print(f"epoch {epoch} done")
