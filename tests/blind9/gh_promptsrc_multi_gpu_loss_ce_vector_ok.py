# Source: https://github.com/muzairkhattak/PromptSRC/issues/6
"""PromptSRC's trainer with the maintainer's fix: train on one GPU (CUDA_VISIBLE_DEVICES=0), so
Dassl's build_model sees a single device, does not wrap the model in DataParallel, and loss_ce
stays a 0-dim loss."""
from types import SimpleNamespace

import torch
import torch.nn as nn
import torch.nn.functional as F


class PromptLearner(nn.Module):
    def __init__(self, n_cls, n_ctx, dim):
        super().__init__()
        self.ctx = nn.Parameter(torch.randn(n_ctx, dim) * 0.02)
        self.register_buffer("token_embedding", torch.randn(n_cls, dim))

    def forward(self):
        return self.token_embedding + self.ctx.mean(0)


class CustomCLIP(nn.Module):
    def __init__(self, n_cls=4, n_ctx=2, dim=8, image_dim=12):
        super().__init__()
        self.prompt_learner = PromptLearner(n_cls, n_ctx, dim)
        self.text_encoder = nn.Linear(dim, dim)
        self.image_encoder = nn.Linear(image_dim, dim)
        self.logit_scale = nn.Parameter(torch.tensor(4.6), requires_grad=False)
        for p in list(self.text_encoder.parameters()) + list(self.image_encoder.parameters()):
            p.requires_grad_(False)
        self.register_buffer("fixed_embeddings", F.normalize(torch.randn(n_cls, dim), dim=-1))
        self.image_adapter = nn.Linear(dim, dim)

    def forward(self, image, label=None):
        logit_scale = self.logit_scale.exp()
        text_features = self.text_encoder(self.prompt_learner())
        image_features = self.image_adapter(self.image_encoder(image))
        image_features = image_features / image_features.norm(dim=-1, keepdim=True)
        text_features = text_features / text_features.norm(dim=-1, keepdim=True)
        logits = logit_scale * image_features @ text_features.t()
        if self.prompt_learner.training:
            fixed_embeddings = self.fixed_embeddings
            with torch.no_grad():
                zero_shot_features = self.image_encoder(image)
                zero_shot_features = zero_shot_features / zero_shot_features.norm(dim=-1, keepdim=True)
                zero_shot_logits = logit_scale * zero_shot_features @ fixed_embeddings.t()
            return (F.cross_entropy(logits, label), text_features, fixed_embeddings,
                    zero_shot_features, image_features, zero_shot_logits, logits)
        return logits


def _gather(outputs):
    first = outputs[0]
    if isinstance(first, torch.Tensor):
        if first.dim() == 0:  # torch warns and unsqueezes: one entry per device
            return torch.stack(outputs)
        return torch.cat(outputs, 0)
    return type(first)(_gather(list(parts)) for parts in zip(*outputs))


class DataParallel(nn.Module):
    """nn.DataParallel over device_count devices, run on CPU: one replica call per batch chunk."""

    def __init__(self, module, device_count):
        super().__init__()
        self.module = module
        self.device_count = device_count

    def forward(self, *inputs):
        chunks = zip(*(x.chunk(self.device_count) for x in inputs))
        return _gather([self.module(*chunk) for chunk in chunks])


class PromptSRC:
    def __init__(self, cfg, device_count):
        self.cfg = cfg
        self.model = CustomCLIP()
        for name, param in self.model.named_parameters():
            if "prompt_learner" not in name and "image_adapter" not in name:
                param.requires_grad_(False)
        self.optim = torch.optim.SGD([p for p in self.model.parameters() if p.requires_grad], lr=cfg.OPTIM.LR)
        if device_count > 1:
            print(f"Multiple GPUs detected (n_gpus={device_count}), use all of them!")
            self.model = DataParallel(self.model, device_count)

    def parse_batch_train(self, batch):
        return batch["img"], batch["label"]

    def forward_backward(self, batch):
        image, label = self.parse_batch_train(batch)
        model = self.model
        optim = self.optim
        loss_ce, normalized_text_features, zs_clip_text_embeddings, zs_image_embedd, image_ft, \
            zero_shot_logits, logits = model(image, label)
        # Calculate the L_SCL_text loss
        loss_scl_text = F.l1_loss(normalized_text_features, zs_clip_text_embeddings,
                                  reduction='mean') * self.cfg.TRAINER.PROMPTSRC.TEXT_LOSS_WEIGHT
        # Calculate the L_SCL_image loss
        loss_scl_image = F.l1_loss(image_ft, zs_image_embedd,
                                   reduction='mean') * self.cfg.TRAINER.PROMPTSRC.IMAGE_LOSS_WEIGHT
        # Now calculate L_SCL_logits
        L_SCL_logits = F.kl_div(
            F.log_softmax(logits / 1, dim=1),
            F.log_softmax(zero_shot_logits / 1, dim=1),
            reduction='sum',
            log_target=True
        ) * (1 * 1) / logits.numel()
        L_SCL = (L_SCL_logits + loss_scl_text + loss_scl_image)
        loss = (loss_ce + L_SCL)
        optim.zero_grad()
        loss.backward()
        optim.step()
        return {"loss": loss.item()}


def train(trainer, batches=2, batch_size=4, n_cls=4):
    for i in range(batches):
        batch = {"img": torch.randn(batch_size, 12), "label": torch.randint(0, n_cls, (batch_size,))}
        print(i, trainer.forward_backward(batch))


if __name__ == "__main__":
    cfg = SimpleNamespace(OPTIM=SimpleNamespace(LR=0.0025),
                          TRAINER=SimpleNamespace(PROMPTSRC=SimpleNamespace(TEXT_LOSS_WEIGHT=25,
                                                                            IMAGE_LOSS_WEIGHT=10)))
    device_count = 1  # torch.cuda.device_count() under CUDA_VISIBLE_DEVICES=0
    train(PromptSRC(cfg, device_count))
