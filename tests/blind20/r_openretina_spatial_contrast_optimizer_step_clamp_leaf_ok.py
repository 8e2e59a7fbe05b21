# Source: https://github.com/open-retina/open-retina/pull/180
"""open-retina PR #180 (Spatial Contrast model): ``SingleCellSpatialContrast`` is a Lightning
module whose ``optimizer_step`` override steps AdamW and then clamps the gain of its
``ParametrizedSoftplus`` nonlinearity with ``self.nonlinearity.w.clamp_(min=0.0)`` to avoid
negative predictions.

``self.nonlinearity.w`` is an ``nn.Parameter`` -- a leaf that requires grad -- and
``optimizer_step`` runs with grad mode on, so the in-place ``clamp_`` raises "a leaf Variable that
requires grad is being used in an in-place operation" on the first training step (the reviewer's
comment in the PR).  Fixed here as committed in the PR (0f7ea01): clamp the data,
``self.nonlinearity.w.data.clamp_(min=0.0)`` (``with torch.no_grad():`` works as well).

Stand-ins: a minimal Lightning (``LightningModule.log``/``save_hyperparameters`` and a ``Trainer``
whose automatic optimisation passes a closure -- zero_grad, ``training_step``, backward -- to
``optimizer_step``, as Lightning does), einops ``rearrange`` for the three patterns used, random
STA filters instead of the .npy files, openretina's Poisson/correlation losses, random stimuli.
"""
from collections import namedtuple
from typing import Any, Callable, Optional, Union

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim import Optimizer

DataPoint = namedtuple("DataPoint", ["inputs", "targets"])


# ---- stand-in for einops.rearrange (only the patterns used below) ----
def rearrange(x, pattern, **sizes):
    if pattern == "b c t h w -> (b h w) c t":
        b, c, t, h, w = x.shape
        return x.permute(0, 3, 4, 1, 2).reshape(b * h * w, c, t)
    if pattern == "(b h w) 1 t -> b t h w":
        b, h, w = sizes["b"], sizes["h"], sizes["w"]
        t = x.shape[-1]
        return x.reshape(b, h, w, t).permute(0, 3, 1, 2)
    if pattern == "batch time -> batch time 1":
        return x.unsqueeze(-1)
    raise ValueError(pattern)


# ---- stand-in for lightning ----
class LightningOptimizer:
    pass


class LightningModule(nn.Module):
    def save_hyperparameters(self, ignore=None):
        pass

    def log(self, name, value, **kwargs):
        pass


class Trainer:
    def __init__(self, max_epochs=1):
        self.max_epochs = max_epochs

    def fit(self, model, train_dataloaders, val_dataloaders):
        config = model.configure_optimizers()
        optimizer = config["optimizer"]
        for epoch in range(self.max_epochs):
            model.train()
            for batch_idx, batch in enumerate(train_dataloaders):
                def closure():
                    optimizer.zero_grad()
                    loss = model.training_step(batch, batch_idx)
                    loss.backward()
                    return loss

                model.optimizer_step(epoch, batch_idx, optimizer, closure)
            model.eval()
            with torch.no_grad():
                for batch_idx, batch in enumerate(val_dataloaders):
                    model.validation_step(batch, batch_idx)


# ---- stand-ins for openretina modules ----
class ParametrizedSoftplus(nn.Module):
    def __init__(self, a=1.0, b=0.0, w=1.0, learn_a=False):
        super().__init__()
        if learn_a:
            self.a = nn.Parameter(torch.tensor(a), requires_grad=True)
        else:
            self.a = torch.tensor(a)
        self.b = nn.Parameter(torch.tensor(b), requires_grad=True)
        self.w = nn.Parameter(torch.tensor(w), requires_grad=True)

    def forward(self, x):
        scaled_x = self.a * x + self.b
        # using torch's softplus is numerically more stable
        return self.w * nn.functional.softplus(scaled_x)


class PoissonLoss3d(nn.Module):
    def __init__(self, bias=1e-12, per_neuron=False, avg=False):
        super().__init__()
        self.bias = bias
        self.per_neuron = per_neuron
        self.avg = avg

    def forward(self, output, target):
        lag = target.size(1) - output.size(1)
        loss = output - target[:, lag:, :] * torch.log(output + self.bias)
        return loss.mean() if self.avg else loss.sum()


class CorrelationLoss3d(nn.Module):
    def __init__(self, eps=1e-8, avg=False):
        super().__init__()
        self.eps = eps
        self.avg = avg

    def forward(self, output, target):
        lag = target.size(1) - output.size(1)
        target = target[:, lag:, :]
        delta_out = output - output.mean(1, keepdim=True)
        delta_target = target - target.mean(1, keepdim=True)
        var_out = delta_out.pow(2).mean(1, keepdim=True)
        var_target = delta_target.pow(2).mean(1, keepdim=True)
        corrs = (delta_out * delta_target).mean(1, keepdim=True) / (
            (var_out + self.eps) * (var_target + self.eps)).sqrt()
        return -corrs.mean() if self.avg else -corrs.sum()


def load_sta_and_extract_filters(sta_dir, file_name, flip_sta, target_spatial_shape,
                                 temporal_crop_frames, sigma_contour):
    rng = np.random.RandomState(0)
    h, w = target_spatial_shape
    yy, xx = np.mgrid[0:h, 0:w]
    cy, cx = h / 2.0, w / 2.0
    spatial_filter = np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / (2 * 2.0 ** 2)).astype(np.float32)
    temporal_filter = rng.randn(temporal_crop_frames or 10).astype(np.float32)
    gaussian_params = {"center_y": cy, "center_x": cx}
    return spatial_filter, temporal_filter, gaussian_params


class SingleCellSpatialContrast(LightningModule):
    """Single-cell Spatial Contrast model: y = a * log(1 + exp(b * (imean + w * lsc) + c))."""

    def __init__(
        self,
        in_shape,
        sta_dir,
        sta_file_name: str,
        flip_sta: bool = False,
        temporal_crop_frames: int | None = None,
        sigma_contour: float = 3.0,
        spat_crop_size: tuple[int, int] | None = None,
        learning_rate: float = 1e-3,
        w_init: float = 0.0,
        a_init: float = 1.0,
        b_init: float = 1.0,
        c_init: float = 0.0,
        loss=None,
        validation_loss=None,
    ):
        super().__init__()
        self.save_hyperparameters(ignore=["loss", "validation_loss"])

        self.learning_rate = learning_rate
        self.loss = loss if loss is not None else PoissonLoss3d(per_neuron=True, avg=True)
        self.validation_loss = validation_loss if validation_loss is not None else CorrelationLoss3d(avg=True)

        target_spatial_shape = (in_shape[-2], in_shape[-1])
        spatial_filter, temporal_filter, gaussian_params = load_sta_and_extract_filters(
            sta_dir=sta_dir,
            file_name=sta_file_name,
            flip_sta=flip_sta,
            target_spatial_shape=target_spatial_shape,
            temporal_crop_frames=temporal_crop_frames,
            sigma_contour=sigma_contour,
        )
        self.gaussian_params = gaussian_params
        self.rf_location = (int(gaussian_params["center_y"]), int(gaussian_params["center_x"]))
        self.in_shape = in_shape
        self.spat_crop_size = spat_crop_size
        self.do_crop = spat_crop_size is not None

        # Filters are registered as buffers: non-trainable but saved in state_dict
        self.register_buffer("spatial_filter", torch.from_numpy(spatial_filter))
        self.register_buffer("temporal_filter", torch.from_numpy(temporal_filter))
        self.register_buffer("spatial_filter_sum", torch.tensor(spatial_filter.sum()))

        # The 4 learnable parameters
        self.nonlinearity = ParametrizedSoftplus(w=a_init, a=b_init, b=c_init, learn_a=True)
        # The `w` here is different from the `w` used in ParametrizedSoftplus
        self.w = nn.Parameter(torch.tensor(w_init, dtype=torch.float32), requires_grad=True)

    def temporal_filter_stimulus(self, x):
        batch, channels, time, h, w = x.shape
        x_reshaped = rearrange(x, "b c t h w -> (b h w) c t")
        kernel = self.temporal_filter.view(1, 1, -1)
        filtered = F.conv1d(x_reshaped, kernel, padding=0)
        return rearrange(filtered, "(b h w) 1 t -> b t h w", b=batch, h=h, w=w)

    def compute_imean(self, temp_filtered):
        weighted = self.spatial_filter * temp_filtered
        return weighted.sum(dim=(-2, -1)) / (self.spatial_filter_sum + 1e-8)

    def compute_lsc(self, temp_filtered, imean):
        imean_broadcast = imean[:, :, None, None]
        deviation_sq = (temp_filtered - imean_broadcast) ** 2
        weighted_var = (self.spatial_filter * deviation_sq).sum(dim=(-2, -1))
        return torch.sqrt(weighted_var / (self.spatial_filter_sum + 1e-8))

    def forward(self, x, data_key=None, **kwargs):
        temp_filtered = self.temporal_filter_stimulus(x)
        imean = self.compute_imean(temp_filtered)
        lsc = self.compute_lsc(temp_filtered, imean)

        combined = imean + self.w * lsc
        output = self.nonlinearity(combined)

        return rearrange(output, "batch time -> batch time 1")

    def training_step(self, batch, batch_idx: int) -> torch.Tensor:
        session_id, data_point = batch

        model_output = self.forward(data_point.inputs, session_id)
        loss = self.loss.forward(model_output, data_point.targets)
        correlation = -self.validation_loss.forward(model_output, data_point.targets)

        self.log("train_loss", loss, on_step=False, on_epoch=True)
        self.log("train_correlation", correlation, on_step=False, on_epoch=True, prog_bar=True)

        return loss

    def validation_step(self, batch, batch_idx: int) -> torch.Tensor:
        session_id, data_point = batch

        model_output = self.forward(data_point.inputs, session_id)
        loss = self.loss.forward(model_output, data_point.targets) / sum(model_output.shape)
        correlation = -self.validation_loss.forward(model_output, data_point.targets)

        self.log("val_loss", loss, logger=True, prog_bar=True)
        self.log("val_correlation", correlation, logger=True, prog_bar=True)

        return loss

    def optimizer_step(
        self,
        epoch: int,
        batch_idx: int,
        optimizer: Union[Optimizer, LightningOptimizer],
        optimizer_closure: Optional[Callable[[], Any]] = None,
    ) -> None:
        """Override implementation to allow parameter clamping at each training step"""
        optimizer.step(closure=optimizer_closure)

        # To avoid negative model predictions, clamp the gain parameter in the nonlinearity
        self.nonlinearity.w.data.clamp_(min=0.0)

    def configure_optimizers(self):
        optimizer = torch.optim.AdamW(self.parameters(), lr=self.learning_rate)
        scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, mode="max", factor=0.3)
        return {
            "optimizer": optimizer,
            "lr_scheduler": {"scheduler": scheduler, "monitor": "val_correlation", "frequency": 1},
        }


def make_batches(n_batches, in_shape, n_time_out, seed):
    g = torch.Generator().manual_seed(seed)
    c, t, h, w = in_shape
    return [
        ("session_1", DataPoint(torch.rand(4, c, t, h, w, generator=g),
                                torch.poisson(torch.ones(4, n_time_out, 1) * 2.0, generator=g)))
        for _ in range(n_batches)
    ]


torch.manual_seed(0)
in_shape = (1, 20, 12, 12)
model = SingleCellSpatialContrast(in_shape, sta_dir="stas", sta_file_name="cell_data_04_WN_stas_cell_2.npy",
                                  temporal_crop_frames=8, learning_rate=1e-2, a_init=1.0, b_init=1.0, c_init=0.0)
train_loader = make_batches(3, in_shape, 20 - 8 + 1, seed=1)
val_loader = make_batches(1, in_shape, 20 - 8 + 1, seed=2)
trainer = Trainer(max_epochs=2)
trainer.fit(model, train_dataloaders=train_loader, val_dataloaders=val_loader)
