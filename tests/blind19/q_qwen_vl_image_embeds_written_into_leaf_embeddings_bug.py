# Source: https://github.com/QwenLM/Qwen-VL/issues/56
"""Qwen-VL fine-tuning (modelscope SFT example, LoRA + gradient checkpointing) fails in the forward of
QWenModel (modeling_qwen.py) with "a view of a leaf Variable that requires grad is being used in an
in-place operation".

With LoRA the word embedding `wte` is frozen, and gradient checkpointing calls
`model.enable_input_require_grads()`, a forward hook on the input embeddings that does
`output.requires_grad_(True)`. The embedding output therefore has no grad_fn and becomes a LEAF that
requires grad. QWenModel.forward then pastes the visual features into it in place,
`hidden_states[i][a + 1 : b] = images[idx]`, writing through a view of that leaf. The fix posted in
the thread (chensiye-csy): build the rows out of place, `torch.cat([head, images[idx], tail])`,
and `torch.stack` them. The transformer blocks, the ViT, the LoRA adapters and the tokenizer are small
stand-ins; the image-span bookkeeping (img_pos from the <img> ... </img> token ids) is the original's.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)

IMG_START_ID, IMG_END_ID, VOCAB, HIDDEN, N_IMG_TOKENS = 90, 91, 100, 16, 4


class VisionTransformer(nn.Module):
    """Stand-in for Qwen-VL's ViT + resampler: N_IMG_TOKENS embeddings per image."""
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(3 * 8 * 8, N_IMG_TOKENS * HIDDEN)

    def encode(self, images):
        return self.proj(images.flatten(1)).view(images.size(0), N_IMG_TOKENS, HIDDEN)


class LoRALinear(nn.Module):
    def __init__(self, base: nn.Linear, r=2):
        super().__init__()
        self.base = base
        self.lora_A = nn.Linear(base.in_features, r, bias=False)
        self.lora_B = nn.Linear(r, base.out_features, bias=False)
        nn.init.zeros_(self.lora_B.weight)

    def forward(self, x):
        return self.base(x) + self.lora_B(self.lora_A(x))


class QWenBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln_1 = nn.LayerNorm(HIDDEN)
        self.c_attn = nn.Linear(HIDDEN, HIDDEN)
        self.ln_2 = nn.LayerNorm(HIDDEN)
        self.mlp = nn.Sequential(nn.Linear(HIDDEN, 2 * HIDDEN), nn.GELU(), nn.Linear(2 * HIDDEN, HIDDEN))

    def forward(self, x):
        x = x + self.c_attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class QWenModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.wte = nn.Embedding(VOCAB, HIDDEN)
        self.visual = VisionTransformer()
        self.h = nn.ModuleList([QWenBlock() for _ in range(2)])
        self.ln_f = nn.LayerNorm(HIDDEN)

    def forward(self, input_ids, images=None):
        if torch.any(input_ids == IMG_START_ID):
            bos_pos = torch.where(input_ids == IMG_START_ID)
            eos_pos = torch.where(input_ids == IMG_END_ID)
            assert (bos_pos[0] == eos_pos[0]).all()
            img_pos = torch.stack((bos_pos[0], bos_pos[1], eos_pos[1]), dim=1)
            images = self.visual.encode(images)
            assert images.shape[0] == len(img_pos)
        else:
            images = None

        hidden_states = self.wte(input_ids)

        if images is not None:
            for idx, (i, a, b) in enumerate(img_pos):
                hidden_states[i][a + 1: b] = images[idx]  # expect: GG108

        for block in self.h:
            hidden_states = block(hidden_states)
        return self.ln_f(hidden_states)


class QWenLMHeadModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.transformer = QWenModel()
        self.lm_head = nn.Linear(HIDDEN, VOCAB, bias=False)

    def get_input_embeddings(self):
        return self.transformer.wte

    def enable_input_require_grads(self):
        """As transformers.PreTrainedModel.enable_input_require_grads (used with gradient checkpointing)."""
        def make_inputs_require_grads(module, input, output):
            output.requires_grad_(True)
        self._require_grads_hook = self.get_input_embeddings().register_forward_hook(make_inputs_require_grads)

    def forward(self, input_ids, images=None, labels=None):
        hidden_states = self.transformer(input_ids, images)
        lm_logits = self.lm_head(hidden_states)
        loss = None
        if labels is not None:
            shift_logits = lm_logits[..., :-1, :].contiguous()
            shift_labels = labels[..., 1:].contiguous()
            loss = F.cross_entropy(shift_logits.view(-1, VOCAB), shift_labels.view(-1), ignore_index=-100)
        return loss, lm_logits


def prepare_model_for_lora(model):
    """Stand-in for swift/peft: freeze the base model, add LoRA adapters on c_attn."""
    for p in model.parameters():
        p.requires_grad = False
    for block in model.transformer.h:
        block.c_attn = LoRALinear(block.c_attn)
    return model


def make_batch(bs=2, seq=12):
    input_ids = torch.randint(0, 80, (bs, seq))
    input_ids[:, 1] = IMG_START_ID
    input_ids[:, 2 + N_IMG_TOKENS] = IMG_END_ID
    images = torch.rand(bs, 3, 8, 8)
    labels = input_ids.clone()
    labels[:, :3 + N_IMG_TOKENS] = -100
    return input_ids, images, labels


model = prepare_model_for_lora(QWenLMHeadModel())
model.enable_input_require_grads()
optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4)

model.train()
for step in range(2):
    input_ids, images, labels = make_batch()
    loss, _ = model(input_ids, images=images, labels=labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print('step', step, 'loss', loss.item())
