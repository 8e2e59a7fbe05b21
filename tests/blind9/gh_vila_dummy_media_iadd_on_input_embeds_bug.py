# Source: https://github.com/NVlabs/VILA/pull/199
"""VILA's LlavaMetaForCausalLM._embed during projector-only fine-tuning of a text-only batch: the
LLM is frozen and gradient checkpointing is on, so (as Hugging Face's enable_input_require_grads
does) a forward hook on embed_tokens marks its output requires_grad. That output is then a leaf
that requires grad, and the workaround that consumes the dummy media embeddings,
`text_embeds += torch.sum(dummy_embed) * 0`, is an in-place op on it. The LLM, vision tower and
projector are small stand-ins with the same embedding/hook/fusion steps; the batch is random
token ids."""
from collections import deque

import torch
import torch.nn as nn
import torch.nn.functional as F


class LlamaModel(nn.Module):
    def __init__(self, vocab_size, hidden):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab_size, hidden)
        self.layers = nn.ModuleList([nn.Linear(hidden, hidden) for _ in range(2)])

    def forward(self, inputs_embeds):
        h = inputs_embeds
        for layer in self.layers:
            h = h + torch.tanh(layer(h))
        return h


class LlamaForCausalLM(nn.Module):
    def __init__(self, vocab_size=32, hidden=16):
        super().__init__()
        self.model = LlamaModel(vocab_size, hidden)
        self.lm_head = nn.Linear(hidden, vocab_size, bias=False)

    def get_input_embeddings(self):
        return self.model.embed_tokens

    def enable_input_require_grads(self):
        def make_inputs_require_grads(module, input, output):
            output.requires_grad_(True)

        self._require_grads_hook = self.get_input_embeddings().register_forward_hook(make_inputs_require_grads)

    def forward(self, inputs_embeds):
        return self.lm_head(self.model(inputs_embeds))


class LlavaLlamaModel(nn.Module):
    def __init__(self, hidden=16, image_dim=12):
        super().__init__()
        self.llm = LlamaForCausalLM(hidden=hidden)
        self.vision_tower = nn.Linear(image_dim, image_dim)
        self.mm_projector = nn.Sequential(nn.Linear(image_dim, hidden), nn.GELU(), nn.Linear(hidden, hidden))

    def _embed_media_tokens(self, media):
        embeds = {}
        for name, images in media.items():
            features = self.mm_projector(self.vision_tower(images))
            embeds[name] = deque(torch.unbind(features))
        return embeds

    def _embed(self, input_ids, media, labels, attention_mask):
        text_embeds = self.llm.model.embed_tokens(input_ids)
        media_embeds = self._embed_media_tokens(media)

        # This is a workaround to make sure the dummy embeddings are consumed
        while media_embeds.get("dummy"):
            dummy_embed = media_embeds["dummy"].popleft()
            text_embeds += torch.sum(dummy_embed) * 0  # expect: GG108

        # Remove padding
        batch_size = labels.shape[0]
        text_embeds = [text_embeds[k][attention_mask[k]] for k in range(batch_size)]
        labels = [labels[k][attention_mask[k]] for k in range(batch_size)]
        inputs_embeds = torch.nn.utils.rnn.pad_sequence(text_embeds, batch_first=True)
        labels = torch.nn.utils.rnn.pad_sequence(labels, batch_first=True, padding_value=-100)
        return inputs_embeds, labels

    def forward(self, input_ids, media, labels, attention_mask):
        inputs_embeds, labels = self._embed(input_ids, media, labels, attention_mask)
        logits = self.llm(inputs_embeds)
        return F.cross_entropy(logits[:, :-1].reshape(-1, logits.size(-1)), labels[:, 1:].reshape(-1),
                               ignore_index=-100)


model = LlavaLlamaModel()
model.llm.requires_grad_(False)  # projector-only stage: the LLM is frozen
model.vision_tower.requires_grad_(False)
model.llm.enable_input_require_grads()  # gradient checkpointing with a frozen LLM
optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4)

for step in range(2):
    input_ids = torch.randint(0, 32, (2, 6))
    attention_mask = torch.ones(2, 6, dtype=torch.bool)
    attention_mask[1, -2:] = False
    media = {"dummy": torch.zeros(1, 12)}  # text-only batch: one dummy image keeps the vision path in use
    loss = model(input_ids, media, input_ids.clone(), attention_mask)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(step, loss.item())
