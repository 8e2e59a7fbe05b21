# Source: https://github.com/2U1/Qwen-VL-Series-Finetune/pull/178
"""Fixed twin of q_qwen_vl_finetune_qlora_index_copy_embeds_bug.py. Qwen-VL-Series-Finetune,
Qwen2.5-VL with QLoRA and gradient checkpointing: `enable_input_require_grads()` makes the frozen
embedding's output a leaf that requires grad, and the monkey-patched forward wrote the image
features into it through a view with `flat.index_copy_(...)` (GG108). Fix (the merged PR): the copy
is out of place, `flat = flat.index_copy(0, row_idx, img)`; the video branch, which had the same
`index_copy_` (not reached here), is changed the same way. The Qwen2.5-VL model, PEFT's LoRA
wrapping, the HF `enable_input_require_grads` / gradient checkpointing and the Trainer are small CPU
stand-ins written in the file; the batches are random tokens and patches.
"""
from types import SimpleNamespace
from typing import Optional

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

# ----------------------------- stand-ins: transformers Qwen2.5-VL, peft -----------------------------


class VisionTower(nn.Module):
    def __init__(self, patch_dim, hidden):
        super().__init__()
        self.proj = nn.Sequential(nn.Linear(patch_dim, hidden), nn.GELU(), nn.Linear(hidden, hidden))
        self.dtype, self.device = torch.float32, torch.device("cpu")

    def forward(self, pixel_values, grid_thw=None):
        return self.proj(pixel_values)


class DecoderLayer(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.q_proj = nn.Linear(hidden, hidden)
        self.mlp = nn.Sequential(nn.Linear(hidden, 2 * hidden), nn.SiLU(), nn.Linear(2 * hidden, hidden))
        self.norm = nn.LayerNorm(hidden)

    def forward(self, x):
        return x + self.mlp(self.norm(self.q_proj(x)))


class TextModel(nn.Module):
    def __init__(self, vocab, hidden, n_layers):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, hidden)
        self.layers = nn.ModuleList([DecoderLayer(hidden) for _ in range(n_layers)])
        self.gradient_checkpointing = False

    def forward(self, input_ids=None, inputs_embeds=None, position_ids=None, attention_mask=None):
        h = inputs_embeds
        for layer in self.layers:
            if self.gradient_checkpointing and self.training:
                h = checkpoint(layer, h, use_reentrant=True)
            else:
                h = layer(h)
        return h


class Qwen2_5_VLForConditionalGeneration(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.visual = VisionTower(config.patch_dim, config.hidden_size)
        self.model = TextModel(config.vocab_size, config.hidden_size, config.num_hidden_layers)
        self.lm_head = nn.Linear(config.hidden_size, config.vocab_size, bias=False)
        self.rope_deltas = None

    def get_input_embeddings(self):
        return self.model.embed_tokens

    def enable_input_require_grads(self):
        def make_inputs_require_grads(module, input, output):
            output.requires_grad_(True)
        self._require_grads_hook = self.get_input_embeddings().register_forward_hook(make_inputs_require_grads)

    def gradient_checkpointing_enable(self, gradient_checkpointing_kwargs=None):
        self.model.gradient_checkpointing = True


class LoraLinear(nn.Module):
    def __init__(self, base, r=4, alpha=8):
        super().__init__()
        self.base = base
        self.lora_A = nn.Linear(base.in_features, r, bias=False)
        self.lora_B = nn.Linear(r, base.out_features, bias=False)
        nn.init.zeros_(self.lora_B.weight)
        self.scaling = alpha / r

    def forward(self, x):
        return self.base(x) + self.lora_B(self.lora_A(x)) * self.scaling


def get_peft_model(model, target_modules):
    for p in model.parameters():
        p.requires_grad = False
    for layer in model.model.layers:
        for name in target_modules:
            setattr(layer, name, LoraLinear(getattr(layer, name)))
    return model

# ----------------------------- src/train/monkey_patch_forward.py -----------------------------


def replace_qwen2_5_with_mixed_modality_forward(use_liger=True):
    Qwen2_5_VLForConditionalGeneration.forward = qwen2_5_mixed_modality_forward


def qwen2_5_mixed_modality_forward(
    self,
    input_ids: torch.LongTensor = None,
    attention_mask: Optional[torch.Tensor] = None,
    position_ids: Optional[torch.LongTensor] = None,
    inputs_embeds: Optional[torch.FloatTensor] = None,
    labels: Optional[torch.LongTensor] = None,
    pixel_values: Optional[torch.Tensor] = None,
    pixel_values_videos: Optional[torch.FloatTensor] = None,
    image_grid_thw: Optional[torch.LongTensor] = None,
    video_grid_thw: Optional[torch.LongTensor] = None,
):
    if inputs_embeds is None:
        inputs_embeds = self.model.embed_tokens(input_ids)

        # Pass dummy image and dummy grid to the visual model to avoid deepspeed error.
        if pixel_values is None and pixel_values_videos is None:
            dummy_pixel = torch.zeros(4, self.config.patch_dim).to(self.visual.device)
            dummy_grid = torch.tensor([[1, 2, 2]]).to(self.visual.device)
            dummy_pixel = dummy_pixel.type(self.visual.dtype)
            image_embeds = self.visual(dummy_pixel, grid_thw=dummy_grid)
            inputs_embeds += image_embeds.mean() * 0

        if pixel_values is not None:
            pixel_values = pixel_values.type(self.visual.dtype)
            image_embeds = self.visual(pixel_values, grid_thw=image_grid_thw)
            n_image_tokens = (input_ids == self.config.image_token_id).sum().item()
            n_image_features = image_embeds.shape[0]
            if n_image_tokens != n_image_features:
                raise ValueError(
                    f"Image features and image tokens do not match: tokens: {n_image_tokens}, features {n_image_features}"
                )

            mask_img = (input_ids == self.config.image_token_id)
            if mask_img.any():
                B, T, H = inputs_embeds.shape
                b_idx, t_idx = mask_img.nonzero(as_tuple=True)
                row_idx = (b_idx * T + t_idx).to(inputs_embeds.device)

                img = image_embeds.to(inputs_embeds.device, dtype=inputs_embeds.dtype)
                flat = inputs_embeds.view(-1, H)
                flat = flat.index_copy(0, row_idx, img)
                inputs_embeds = flat.view(B, T, H)

        if pixel_values_videos is not None:
            pixel_values_videos = pixel_values_videos.type(self.visual.dtype)
            video_embeds = self.visual(pixel_values_videos, grid_thw=video_grid_thw)
            mask_vid = (input_ids == self.config.video_token_id)
            if mask_vid.any():
                B, T, H = inputs_embeds.shape
                b_idx, t_idx = mask_vid.nonzero(as_tuple=True)
                row_idx = (b_idx * T + t_idx).to(inputs_embeds.device)

                vid = video_embeds.to(inputs_embeds.device, dtype=inputs_embeds.dtype)
                flat = inputs_embeds.view(-1, H)
                flat = flat.index_copy(0, row_idx, vid)

                inputs_embeds = flat.view(B, T, H)

    hidden_states = self.model(input_ids=None, inputs_embeds=inputs_embeds, position_ids=position_ids,
                               attention_mask=attention_mask)
    logits = self.lm_head(hidden_states)

    loss = None
    if labels is not None:
        shift_logits = logits[..., :-1, :].contiguous()
        shift_labels = labels[..., 1:].contiguous()
        loss = F.cross_entropy(shift_logits.view(-1, self.config.vocab_size), shift_labels.view(-1), ignore_index=-100)
    return SimpleNamespace(loss=loss, logits=logits)

# ----------------------------- src/train/train_sft.py -----------------------------


def train():
    training_args = SimpleNamespace(lora_enable=True, freeze_llm=True, freeze_vision_tower=True, vision_lora=False,
                                    gradient_checkpointing=True, bits=4, learning_rate=1e-4, num_train_epochs=1)
    config = SimpleNamespace(vocab_size=40, hidden_size=16, num_hidden_layers=2, patch_dim=12,
                             image_token_id=38, video_token_id=39)

    replace_qwen2_5_with_mixed_modality_forward(use_liger=False)
    torch.manual_seed(0)
    model = Qwen2_5_VLForConditionalGeneration(config)

    if training_args.gradient_checkpointing:
        model.enable_input_require_grads()
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs={"use_reentrant": True})

    if training_args.lora_enable:
        model = get_peft_model(model, target_modules=["q_proj"])

    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=training_args.learning_rate)

    def make_batch(B=2, T=10, n_img=3):
        input_ids = torch.randint(0, 38, (B, T))
        input_ids[:, 1:1 + n_img] = config.image_token_id
        labels = input_ids.clone()
        labels[:, :1 + n_img] = -100
        return dict(input_ids=input_ids, labels=labels, pixel_values=torch.randn(B * n_img, config.patch_dim),
                    image_grid_thw=torch.tensor([[1, 1, n_img]] * B))

    model.train()
    for step, batch in enumerate([make_batch() for _ in range(2)]):
        outputs = model(**batch)
        optimizer.zero_grad()
        outputs.loss.backward()
        optimizer.step()
        print(step, outputs.loss.item())


if __name__ == "__main__":
    train()
