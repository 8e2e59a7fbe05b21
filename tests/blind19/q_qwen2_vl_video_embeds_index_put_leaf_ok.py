# Source: https://github.com/huggingface/transformers/pull/33307
"""Fixed twin (the PR's fix). transformers Qwen2VLForConditionalGeneration.forward (v4.44/4.45), training on a VIDEO dataset with
LoRA and gradient checkpointing (LLaMA-Factory): "a leaf Variable that requires grad is being used in
an in-place operation" at `inputs_embeds[video_mask] = video_embeds`.

With the base model frozen and gradient checkpointing on, `enable_input_require_grads()` hooks the
input embeddings so that `inputs_embeds = self.model.embed_tokens(input_ids)` comes back as a LEAF
that requires grad. The image branch already guards its in-place write with
`if self.training: inputs_embeds = inputs_embeds.clone()`, but the video branch writes
`inputs_embeds[video_mask] = video_embeds` straight into the leaf, so a video-only batch raises.
The PR's fix: clone in the video branch too. The ViT, the decoder layers, the LoRA adapters and the
data collator are small stand-ins; the forward's embedding/vision logic is the library's.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
VOCAB, HIDDEN, IMAGE_TOKEN_ID, VIDEO_TOKEN_ID, PATCH_DIM = 60, 16, 58, 59, 12


class Qwen2VisionTransformer(nn.Module):
    """Stand-in: one embedding per merged patch."""
    def __init__(self):
        super().__init__()
        self.patch_embed = nn.Linear(PATCH_DIM, HIDDEN)

    def get_dtype(self):
        return self.patch_embed.weight.dtype

    def forward(self, hidden_states, grid_thw=None):
        return self.patch_embed(hidden_states)


class LoraLinear(nn.Module):
    def __init__(self, base, r=2):
        super().__init__()
        self.base_layer = base
        self.lora_A = nn.Linear(base.in_features, r, bias=False)
        self.lora_B = nn.Linear(r, base.out_features, bias=False)

    def forward(self, x):
        return self.base_layer(x) + self.lora_B(self.lora_A(x))


class Qwen2DecoderLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.input_layernorm = nn.LayerNorm(HIDDEN)
        self.q_proj = nn.Linear(HIDDEN, HIDDEN)
        self.mlp = nn.Sequential(nn.Linear(HIDDEN, 2 * HIDDEN), nn.SiLU(), nn.Linear(2 * HIDDEN, HIDDEN))

    def forward(self, h):
        h = h + self.q_proj(self.input_layernorm(h))
        return h + self.mlp(h)


class Qwen2VLModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed_tokens = nn.Embedding(VOCAB, HIDDEN)
        self.layers = nn.ModuleList([Qwen2DecoderLayer() for _ in range(2)])
        self.norm = nn.LayerNorm(HIDDEN)

    def forward(self, inputs_embeds):
        h = inputs_embeds
        for layer in self.layers:
            h = layer(h)
        return self.norm(h)


class Config(object):
    image_token_id = IMAGE_TOKEN_ID
    video_token_id = VIDEO_TOKEN_ID


class Qwen2VLForConditionalGeneration(nn.Module):
    def __init__(self):
        super().__init__()
        self.config = Config()
        self.visual = Qwen2VisionTransformer()
        self.model = Qwen2VLModel()
        self.lm_head = nn.Linear(HIDDEN, VOCAB, bias=False)

    def get_input_embeddings(self):
        return self.model.embed_tokens

    def enable_input_require_grads(self):
        def make_inputs_require_grads(module, input, output):
            output.requires_grad_(True)
        self._require_grads_hook = self.get_input_embeddings().register_forward_hook(make_inputs_require_grads)

    def forward(self, input_ids, labels=None, inputs_embeds=None, pixel_values=None,
                pixel_values_videos=None, image_grid_thw=None, video_grid_thw=None):
        if inputs_embeds is None:
            inputs_embeds = self.model.embed_tokens(input_ids)
            if pixel_values is not None:
                pixel_values = pixel_values.type(self.visual.get_dtype())
                image_embeds = self.visual(pixel_values, grid_thw=image_grid_thw).to(inputs_embeds.device)
                image_mask = input_ids == self.config.image_token_id
                if self.training:
                    inputs_embeds = inputs_embeds.clone()
                inputs_embeds[image_mask] = image_embeds
            if pixel_values_videos is not None:
                pixel_values_videos = pixel_values_videos.type(self.visual.get_dtype())
                video_embeds = self.visual(pixel_values_videos, grid_thw=video_grid_thw).to(inputs_embeds.device)
                video_mask = input_ids == self.config.video_token_id
                if self.training:  # fix (the PR): clone the leaf before writing into it
                    inputs_embeds = inputs_embeds.clone()
                inputs_embeds[video_mask] = video_embeds

        hidden_states = self.model(inputs_embeds)
        logits = self.lm_head(hidden_states)
        loss = None
        if labels is not None:
            shift_logits = logits[..., :-1, :].contiguous()
            shift_labels = labels[..., 1:].contiguous()
            loss = F.cross_entropy(shift_logits.view(-1, VOCAB), shift_labels.view(-1), ignore_index=-100)
        return loss, logits


def prepare_lora(model):
    """Stand-in for peft.get_peft_model: freeze the base, LoRA on q_proj."""
    for p in model.parameters():
        p.requires_grad = False
    for layer in model.model.layers:
        layer.q_proj = LoraLinear(layer.q_proj)
    return model


def video_batch(bs=2, seq=10, n_video_tokens=3):
    """Stand-in for the multimodal collator: a video-only batch."""
    input_ids = torch.randint(0, 50, (bs, seq))
    input_ids[:, 1:1 + n_video_tokens] = VIDEO_TOKEN_ID
    labels = input_ids.clone()
    labels[:, :1 + n_video_tokens] = -100
    pixel_values_videos = torch.randn(bs * n_video_tokens, PATCH_DIM)
    video_grid_thw = torch.tensor([[1, 1, n_video_tokens]] * bs)
    return dict(input_ids=input_ids, labels=labels, pixel_values_videos=pixel_values_videos,
                video_grid_thw=video_grid_thw)


model = prepare_lora(Qwen2VLForConditionalGeneration())
model.enable_input_require_grads()   # what Trainer does for PEFT + gradient checkpointing
optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4)
model.train()
for step in range(2):
    batch = video_batch()
    loss, _ = model(**batch)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print('step', step, 'loss', loss.item())
