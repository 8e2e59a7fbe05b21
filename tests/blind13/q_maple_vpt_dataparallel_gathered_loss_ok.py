# Source: https://github.com/muzairkhattak/multimodal-prompt-learning/issues/37
"""Fixed twin of q_maple_vpt_dataparallel_gathered_loss_bug.py. MaPLe repository, VPT trainer with
several GPUs: `nn.DataParallel` gathers the 0-d `F.cross_entropy` returned by each replica of
`CustomCLIP.forward(..., training=True)` into a vector, and `loss.backward()` raised "grad can be
implicitly created only for scalar outputs". The maintainer's answer was to run on one GPU; the fix
applied here keeps the multi-GPU path: `forward_backward` averages the gathered replica losses
(`loss.mean()`, equal-sized chunks) before the backward. CLIP, Dassl's TrainerX, the optimizer
builders and DataParallel are small CPU stand-ins written in the file.
"""
from types import SimpleNamespace

import torch
import torch.nn as nn
from torch.nn import functional as F

# ----------------------------- stand-ins: torch.nn.DataParallel, CLIP, Dassl -----------------------------


class DataParallel(nn.Module):
    """CPU stand-in for torch.nn.DataParallel over two replicas."""

    def __init__(self, module, device_ids=(0, 1)):
        super().__init__()
        self.module, self.device_ids = module, list(device_ids)

    def forward(self, *inputs, **kwargs):
        n = len(self.device_ids)
        chunks = [x.chunk(n) if torch.is_tensor(x) else [x] * n for x in inputs]
        outputs = [self.module(*args, **kwargs) for args in zip(*chunks)]
        if outputs[0].dim() == 0:
            return torch.stack(outputs)
        return torch.cat(outputs, 0)


class cuda:
    @staticmethod
    def device_count():
        return 2  # two GPUs visible, as in the report


class VisionTransformerVPT(nn.Module):
    """Tiny CLIP visual encoder with deep visual prompts (parameters named 'VPT')."""

    def __init__(self, width=16, depth=2, n_ctx=2, out_dim=8, patch=4, input_resolution=8):
        super().__init__()
        self.input_resolution = input_resolution
        self.conv1 = nn.Conv2d(3, width, patch, patch, bias=False)
        self.VPT = nn.ParameterList([nn.Parameter(torch.randn(n_ctx, width) * 0.02) for _ in range(depth)])
        self.blocks = nn.ModuleList([nn.TransformerEncoderLayer(width, 2, 2 * width, 0.0, batch_first=True) for _ in range(depth)])
        self.proj = nn.Parameter(torch.randn(width, out_dim) * width ** -0.5)
        self.n_ctx = n_ctx

    def forward(self, x):
        x = self.conv1(x).flatten(2).transpose(1, 2)
        for i, (prompt, blk) in enumerate(zip(self.VPT, self.blocks)):
            if i > 0:  # deep prompts replace the previous layer's prompt tokens
                x = x[:, self.n_ctx:]
            x = torch.cat([prompt.expand(x.shape[0], -1, -1), x], dim=1)
            x = blk(x)
        return x.mean(1) @ self.proj


class CLIPStandIn(nn.Module):
    def __init__(self, n_classes):
        super().__init__()
        self.visual = VisionTransformerVPT()
        self.logit_scale = nn.Parameter(torch.tensor(4.6052))
        self.dtype = torch.float32
        self.class_text_features = torch.randn(n_classes, 8)

    def encode_text(self, class_idx):
        return self.class_text_features[class_idx]


def build_optimizer(model, optim_cfg):
    return torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=optim_cfg.LR)


def build_lr_scheduler(optimizer, optim_cfg):
    return torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, optim_cfg.MAX_EPOCH)


class TrainerX:
    """Minimal stand-in for dassl.engine.TrainerX."""

    def __init__(self, cfg, dm):
        self.cfg, self.dm = cfg, dm
        self.device = torch.device("cpu")
        self.check_cfg(cfg)
        self.build_model()

    def register_model(self, name, model, optim, sched):
        self._models = {name: (model, optim, sched)}

    def update_lr(self):
        self.sched.step()

    def train(self):
        for self.epoch in range(self.cfg.OPTIM.MAX_EPOCH):
            self.num_batches = len(self.dm.train_loader_x)
            for self.batch_idx, batch in enumerate(self.dm.train_loader_x):
                loss_summary = self.forward_backward(batch)
            print("epoch", self.epoch, loss_summary)

# ----------------------------- trainers/vpt.py -----------------------------


class FixedEmbeddings():
    def __init__(self, cfg, classnames, clip_model):
        prompt_prefix = "a photo of a"
        classnames = [name.replace("_", " ") for name in classnames]
        prompts = [prompt_prefix + " " + name + "." for name in classnames]
        with torch.no_grad():
            text_features = clip_model.encode_text(torch.arange(len(prompts)))
        self.fixed_embeddings = text_features

    def return_fixed_embeddings(self):
        return self.fixed_embeddings


class CustomCLIP(nn.Module):
    def __init__(self, cfg, classnames, clip_model):
        super().__init__()
        self.embeddings = FixedEmbeddings(cfg, classnames, clip_model)
        self.image_encoder = clip_model.visual
        self.logit_scale = clip_model.logit_scale
        self.dtype = clip_model.dtype

    def forward(self, image, label=None, training=False):
        logit_scale = self.logit_scale.exp()

        text_features = self.embeddings.return_fixed_embeddings()
        image_features = self.image_encoder(image.type(self.dtype))

        image_features = image_features / image_features.norm(dim=-1, keepdim=True)
        text_features = text_features / text_features.norm(dim=-1, keepdim=True)
        logits = logit_scale * image_features @ text_features.t()

        if training:
            return F.cross_entropy(logits, label)

        return logits


class VPT(TrainerX):
    def check_cfg(self, cfg):
        assert cfg.TRAINER.VPT.PREC in ["fp16", "fp32", "amp"]

    def build_model(self):
        cfg = self.cfg
        classnames = self.dm.dataset.classnames

        clip_model = CLIPStandIn(len(classnames))

        print("Building custom CLIP")
        self.model = CustomCLIP(cfg, classnames, clip_model)

        print("Turning off gradients in both the image and the text encoder")
        name_to_update = "prompt_learner"

        for name, param in self.model.named_parameters():
            if name_to_update not in name:
                # Make sure that VPT prompts are updated
                if "VPT" in name:
                    param.requires_grad_(True)
                else:
                    param.requires_grad_(False)

        enabled = set()
        for name, param in self.model.named_parameters():
            if param.requires_grad:
                enabled.add(name)
        print(f"Parameters to be updated: {enabled}")

        self.model.to(self.device)
        self.optim = build_optimizer(self.model, cfg.OPTIM)
        self.sched = build_lr_scheduler(self.optim, cfg.OPTIM)
        self.register_model("prompt_learner", self.model, self.optim, self.sched)

        self.scaler = None

        device_count = cuda.device_count()
        if device_count > 1:
            print(f"Multiple GPUs detected (n_gpus={device_count}), use all of them!")
            self.model = DataParallel(self.model)

    def forward_backward(self, batch):
        image, label = self.parse_batch_train(batch)

        model = self.model
        optim = self.optim

        loss = model(image, label, training=True)
        if loss.dim() > 0:  # one loss per replica gathered by DataParallel
            loss = loss.mean()
        optim.zero_grad()

        loss.backward()
        optim.step()

        loss_summary = {"loss": loss.item()}

        if (self.batch_idx + 1) == self.num_batches:
            self.update_lr()

        return loss_summary

    def parse_batch_train(self, batch):
        input = batch["img"]
        label = batch["label"]
        input = input.to(self.device)
        label = label.to(self.device)
        return input, label


torch.manual_seed(1)
cfg = SimpleNamespace(TRAINER=SimpleNamespace(VPT=SimpleNamespace(PREC="fp32", N_CTX_VISION=2, PROMPT_DEPTH_VISION=2)),
                      OPTIM=SimpleNamespace(LR=0.0025, MAX_EPOCH=2))
classnames = ["pink_primrose", "hard-leaved_pocket_orchid", "canterbury_bells", "sweet_pea"]
dm = SimpleNamespace(dataset=SimpleNamespace(classnames=classnames),
                     train_loader_x=[{"img": torch.randn(4, 3, 8, 8), "label": torch.randint(0, 4, (4,))} for _ in range(3)])
trainer = VPT(cfg, dm)
trainer.train()
