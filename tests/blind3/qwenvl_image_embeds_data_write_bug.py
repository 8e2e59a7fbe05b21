# Source: https://github.com/QwenLM/Qwen-VL/issues/124
"""Fine-tuning only the visual encoder of Qwen-VL (the language model and lm_head frozen through
requires_grad): to get past an in-place error (issue #120) the reporter wrote the image
features into the token embeddings through .data,
`hidden_states.data[i][a + 1 : b] = images.data[idx]`, so the ViT output never enters the
graph; with every language-model weight frozen the loss has no grad_fn and loss.backward()
raises "element 0 of tensors does not require grad and does not have a grad_fn" (fixed by the
maintainers' .clone() suggestion). A two-layer transformer stands in for Qwen-7B, a patch
embedding for the ViT, token ids with one <img>...</img> span per sample for the data."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class VisionTransformer(nn.Module):
    def __init__(self, output_dim, n_queries=4, patch=8):
        super().__init__()
        self.conv1 = nn.Conv2d(3, output_dim, kernel_size=patch, stride=patch)
        self.attn_pool = nn.AdaptiveAvgPool1d(n_queries)
        self.ln_post = nn.LayerNorm(output_dim)

    def encode(self, images):
        x = self.conv1(images).flatten(2)            # (B, C, patches)
        x = self.attn_pool(x).transpose(1, 2)         # (B, n_queries, C)
        return self.ln_post(x)


class QWenModel(nn.Module):
    def __init__(self, vocab_size=64, hidden=32, layers=2, image_start_id=60):
        super().__init__()
        self.image_start_id = image_start_id
        self.wte = nn.Embedding(vocab_size, hidden)
        self.drop = nn.Dropout(0.1)
        self.h = nn.ModuleList(nn.TransformerEncoderLayer(hidden, 4, 64, batch_first=True) for _ in range(layers))
        self.ln_f = nn.LayerNorm(hidden)
        self.visual = VisionTransformer(hidden)

    def forward(self, input_ids, images=None):
        img_pos = None
        if torch.any(input_ids == self.image_start_id):
            bos_pos = torch.where(input_ids == self.image_start_id)
            eos_pos = torch.where(input_ids == self.image_start_id + 1)
            img_pos = torch.stack((bos_pos[0], bos_pos[1], eos_pos[1]), dim=1)
            images = self.visual.encode(images)

        hidden_states = self.wte(input_ids)
        hidden_states = self.drop(hidden_states)
        if images is not None:
            for idx, (i, a, b) in enumerate(img_pos):
                hidden_states.data[i][a + 1: b] = images.data[idx]

        for block in self.h:
            hidden_states = block(hidden_states)
        return self.ln_f(hidden_states)


class QWenLMHeadModel(nn.Module):
    def __init__(self, vocab_size=64, hidden=32):
        super().__init__()
        self.transformer = QWenModel(vocab_size, hidden)
        self.lm_head = nn.Linear(hidden, vocab_size, bias=False)

    def forward(self, input_ids, images, labels):
        lm_logits = self.lm_head(self.transformer(input_ids, images))
        shift_logits = lm_logits[..., :-1, :].contiguous()
        shift_labels = labels[..., 1:].contiguous()
        return F.cross_entropy(shift_logits.view(-1, shift_logits.size(-1)), shift_labels.view(-1), ignore_index=-100)


def make_batch(batch=2, seq_len=12, start=60, n_queries=4):
    input_ids = torch.randint(0, 50, (batch, seq_len))
    input_ids[:, 1] = start
    input_ids[:, 2 + n_queries] = start + 1  # <img> q q q q </img>
    labels = input_ids.clone()
    labels[:, :3 + n_queries] = -100  # no loss on the prompt and the image span
    return input_ids, torch.randn(batch, 3, 16, 32), labels


model = QWenLMHeadModel()
# train the visual encoder only
for name, p in model.named_parameters():
    p.requires_grad = name.startswith("transformer.visual")
optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-5)

model.train()
for step in range(2):
    input_ids, images, labels = make_batch()
    loss = model(input_ids, images, labels)
    optimizer.zero_grad()
    loss.backward()  # expect: GG104
    optimizer.step()
