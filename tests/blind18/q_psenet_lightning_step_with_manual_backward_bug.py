# Source: https://github.com/VinAIResearch/PSENet-Image-Enhancement/issues/1
"""https://github.com/VinAIResearch/PSENet-Image-Enhancement/issues/1
PSENet (unsupervised exposure correction) trained with PyTorch Lightning: the reporter added
`loss.backward()` to `PSENet.training_step` after computing the reconstruction + TV loss. The
LightningModule returns that loss and Lightning's automatic optimisation backwards it again, so
the trainer's backward raises "Trying to backward through the graph a second time". The
maintainer's answer: with Lightning the backward is done by the library; the `loss.backward()`
line in `training_step` must go. PyTorch Lightning (LightningModule, Trainer with automatic
optimisation), piq, the image folders and UnetTMO's MobileBottleneck blocks are small stand-ins
written here (16x16 random images, plain conv blocks, CPU)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


# ---- stand-in for pytorch_lightning (automatic optimisation) ----
class _Experiment:
    def add_image(self, *args, **kwargs):
        pass

    def add_images(self, *args, **kwargs):
        pass


class _Logger:
    experiment = _Experiment()
    log_dir = "."


class LightningModule(nn.Module):
    def __init__(self):
        super().__init__()
        self.logger = _Logger()
        self.current_epoch = 0
        self.trainer = None
        self._schedulers = []

    def log(self, name, value, **kwargs):
        if self.trainer is not None:
            self.trainer.callback_metrics[name] = value.detach() if torch.is_tensor(value) else value

    def lr_schedulers(self):
        return self._schedulers[0] if self._schedulers else None


class Trainer:
    def __init__(self, max_epochs=1):
        self.max_epochs = max_epochs
        self.callback_metrics = {}

    def fit(self, model, train_dataloaders):
        model.trainer = self
        conf = model.configure_optimizers()
        optimizer = conf["optimizer"]
        model._schedulers = [conf["lr_scheduler"]]
        model.train()
        for epoch in range(self.max_epochs):
            model.current_epoch = epoch
            outputs = []
            for batch_idx, batch in enumerate(train_dataloaders):
                loss = model.training_step(batch, batch_idx)
                if loss is None:  # Lightning skips the optimisation step
                    continue
                optimizer.zero_grad()
                loss.backward()  # expect: GG101
                optimizer.step()
                outputs.append(loss.detach())
            model.training_epoch_end(outputs)


# ---- source/loss.py, source/iqa.py ----
class TVLoss(torch.nn.Module):
    def forward(self, x):
        x = torch.log(x + 1e-3)
        h_tv = torch.pow((x[:, :, 1:, :] - x[:, :, :-1, :]), 2)
        w_tv = torch.pow((x[:, :, :, 1:] - x[:, :, :, :-1]), 2)
        return torch.mean(h_tv) + torch.mean(w_tv)


class IQA(nn.Module):
    def __init__(self):
        super().__init__()
        ps = 5
        self.exposed_level = 0.5
        self.mean_pool = torch.nn.Sequential(torch.nn.ReflectionPad2d(ps // 2), torch.nn.AvgPool2d(ps, stride=1))

    def forward(self, images):
        eps = 1 / 255.0
        max_rgb = torch.max(images, dim=1, keepdim=True)[0]
        min_rgb = torch.min(images, dim=1, keepdim=True)[0]
        saturation = (max_rgb - min_rgb + eps) / (max_rgb + eps)
        mean_rgb = self.mean_pool(images).mean(dim=1, keepdim=True)
        exposedness = torch.abs(mean_rgb - self.exposed_level) + eps
        contrast = self.mean_pool(images * images).mean(dim=1, keepdim=True) - mean_rgb ** 2
        return torch.mean((saturation * contrast) / exposedness, dim=[1], keepdim=True)


# ---- source/model.py (UnetTMO, MobileBottleneck blocks replaced by conv + LeakyReLU) ----
def block(inp, oup, stride=1):
    return nn.Sequential(nn.Conv2d(inp, oup, 3, stride, 1), nn.LeakyReLU())


class UnetTMO(nn.Module):
    def __init__(self):
        super().__init__()
        self.first_conv = block(3, 3)
        base_number = 8
        self.conv1 = block(3, base_number, 2)
        self.conv2 = block(base_number, base_number)
        self.conv3 = block(base_number, base_number * 2, 2)
        self.conv5 = block(base_number * 2, base_number * 2)
        self.conv6 = block(base_number * 2, base_number)
        self.conv7 = block(base_number * 2, base_number)
        self.conv8 = block(base_number, 3)
        self.last_conv = block(6, 3)

    def forward(self, x):
        x_down = x
        x_1 = self.first_conv(x)
        r = self.conv1(x_1)
        r = self.conv2(r)
        r_d2 = r
        r = self.conv3(r)
        r = self.conv5(r)
        r = self.conv6(r)
        r = F.interpolate(r, (r_d2.shape[2], r_d2.shape[3]), mode="bilinear", align_corners=True)
        r = self.conv7(torch.cat([r_d2, r], dim=1))
        r = self.conv8(r)
        r = F.interpolate(r, (x_down.shape[2], x_down.shape[3]), mode="bilinear", align_corners=True)
        r = self.last_conv(torch.cat([x_1, r], dim=1))
        r = torch.abs(r + 1)
        x = 1 - (1 - x) ** r
        return x, r


# ---- source/framework.py ----
class PSENet(LightningModule):
    def __init__(self, tv_w, gamma_lower, gamma_upper, number_refs, lr, afifi_evaluation=False):
        super().__init__()
        self.tv_w = tv_w
        self.gamma_lower = gamma_lower
        self.gamma_upper = gamma_upper
        self.number_refs = number_refs
        self.afifi_evaluation = afifi_evaluation
        self.lr = lr
        self.model = UnetTMO()
        self.mse = torch.nn.MSELoss()
        self.tv = TVLoss()
        self.iqa = IQA()
        self.saved_input = None
        self.saved_pseudo_gt = None

    def configure_optimizers(self):
        optimizer = torch.optim.Adam(self.model.parameters(), lr=self.lr, betas=[0.9, 0.99])
        scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, patience=10, factor=0.5)
        return {"optimizer": optimizer, "lr_scheduler": scheduler, "monitor": "total_loss"}

    def training_epoch_end(self, outputs):
        sch = self.lr_schedulers()
        if isinstance(sch, torch.optim.lr_scheduler.ReduceLROnPlateau):
            sch.step(self.trainer.callback_metrics["total_loss"])

    def generate_pseudo_gt(self, im):
        bs, ch, h, w = im.shape
        underexposed_ranges = torch.linspace(0, self.gamma_upper, steps=self.number_refs + 1).to(im.device)[:-1]
        step_size = self.gamma_upper / self.number_refs
        underexposed_gamma = torch.exp(
            torch.rand([bs, self.number_refs], device=im.device) * step_size + underexposed_ranges[None, :]
        )
        overrexposed_ranges = torch.linspace(self.gamma_lower, 0, steps=self.number_refs + 1).to(im.device)[:-1]
        step_size = - self.gamma_lower / self.number_refs
        overrexposed_gamma = torch.exp(
            torch.rand([bs, self.number_refs], device=im.device) * overrexposed_ranges[None, :]
        )
        gammas = torch.cat([underexposed_gamma, overrexposed_gamma], dim=1)
        synthetic_references = 1 - (1 - im[:, None]) ** gammas[:, :, None, None, None]
        previous_iter_output = self.model(im)[0].clone().detach()
        references = torch.cat([im[:, None], previous_iter_output[:, None], synthetic_references], dim=1)
        nref = references.shape[1]
        scores = self.iqa(references.view(bs * nref, ch, h, w))
        scores = scores.view(bs, nref, 1, h, w)
        max_idx = torch.argmax(scores, dim=1)
        max_idx = max_idx.repeat(1, ch, 1, 1)[:, None]
        pseudo_gt = torch.gather(references, 1, max_idx)
        return pseudo_gt.squeeze(1)

    def training_step(self, batch, batch_idx):
        nth_input = batch
        nth_pseudo_gt = self.generate_pseudo_gt(batch)
        if self.saved_input is not None:
            im = self.saved_input
            pred_im, pred_gamma = self.model(im)
            pseudo_gt = self.saved_pseudo_gt
            reconstruction_loss = self.mse(pred_im, pseudo_gt)
            tv_loss = self.tv(pred_gamma)
            loss = reconstruction_loss + tv_loss * self.tv_w
            loss.backward()

            self.log("train_loss/", {"reconstruction": reconstruction_loss, "tv": tv_loss}, on_epoch=True,
                     on_step=False)
            self.log("total_loss", loss, on_epoch=True, on_step=False)
            if batch_idx == 0:
                self.logger.experiment.add_image("images", [im, pseudo_gt, pred_im], self.current_epoch)
        else:
            loss = None
            self.log("total_loss", 0, on_epoch=True, on_step=False)
        self.saved_input = nth_input
        self.saved_pseudo_gt = nth_pseudo_gt
        return loss


torch.manual_seed(0)
train_loader = [torch.rand(2, 3, 16, 16) * 0.5 for _ in range(4)]  # low-light image folder stand-in
model = PSENet(tv_w=500, gamma_lower=-2, gamma_upper=3, number_refs=1, lr=5e-4)
trainer = Trainer(max_epochs=1)
trainer.fit(model, train_dataloaders=train_loader)
print(trainer.callback_metrics["total_loss"])
