# Source: https://github.com/huggingface/peft/issues/137
"""A user fine-tunes flan-t5 with a LoRA config (r=16, target_modules ["q", "v"]) through
`get_peft_model` and trains it with Seq2SeqTrainer and gradient checkpointing (use_cache=False).
The base model is frozen, so the shared embedding's output does not require grad; transformers'
reentrant checkpoint of each T5 block then returns outputs without a graph (the LoRA weights
inside the blocks are never reached), and the trainer's `loss.backward()` raises "element 0 of
tensors does not require grad and does not have a grad_fn". transformers' T5, peft's LoRA
injection and the Seq2SeqTrainer are small stand-ins written here; the data are random tokens.
"""
import math
from types import SimpleNamespace

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint


class T5LayerNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, h):
        var = h.pow(2).mean(-1, keepdim=True)
        return self.weight * (h * torch.rsqrt(var + self.eps))


class T5Attention(nn.Module):
    def __init__(self, d, n_heads):
        super().__init__()
        self.n_heads, self.d_kv = n_heads, d // n_heads
        self.q = nn.Linear(d, d, bias=False)
        self.k = nn.Linear(d, d, bias=False)
        self.v = nn.Linear(d, d, bias=False)
        self.o = nn.Linear(d, d, bias=False)

    def forward(self, h, kv=None):
        kv = h if kv is None else kv
        b, t, d = h.shape
        q = self.q(h).view(b, t, self.n_heads, self.d_kv).transpose(1, 2)
        k = self.k(kv).view(b, -1, self.n_heads, self.d_kv).transpose(1, 2)
        v = self.v(kv).view(b, -1, self.n_heads, self.d_kv).transpose(1, 2)
        w = torch.softmax(q @ k.transpose(-1, -2), dim=-1)
        return self.o((w @ v).transpose(1, 2).reshape(b, t, d))


class T5Block(nn.Module):
    def __init__(self, d, n_heads, is_decoder=False):
        super().__init__()
        self.ln1, self.attn = T5LayerNorm(d), T5Attention(d, n_heads)
        self.is_decoder = is_decoder
        if is_decoder:
            self.ln2, self.cross = T5LayerNorm(d), T5Attention(d, n_heads)
        self.ln3 = T5LayerNorm(d)
        self.wi, self.wo = nn.Linear(d, 4 * d, bias=False), nn.Linear(4 * d, d, bias=False)

    def forward(self, h, enc=None):
        h = h + self.attn(self.ln1(h))
        if self.is_decoder:
            h = h + self.cross(self.ln2(h), enc)
        return h + self.wo(F.relu(self.wi(self.ln3(h))))


class T5Stack(nn.Module):
    def __init__(self, config, embed_tokens, is_decoder=False):
        super().__init__()
        self.embed_tokens = embed_tokens
        self.block = nn.ModuleList([T5Block(config.d_model, config.num_heads, is_decoder)
                                    for _ in range(config.num_layers)])
        self.final_layer_norm = T5LayerNorm(config.d_model)
        self.gradient_checkpointing = False

    def forward(self, input_ids, encoder_hidden_states=None):
        h = self.embed_tokens(input_ids)
        for layer_module in self.block:
            if self.gradient_checkpointing and self.training:
                h = checkpoint(layer_module, h, encoder_hidden_states, use_reentrant=True)
            else:
                h = layer_module(h, encoder_hidden_states)
        return self.final_layer_norm(h)


class T5ForConditionalGeneration(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.shared = nn.Embedding(config.vocab_size, config.d_model)
        self.encoder = T5Stack(config, self.shared)
        self.decoder = T5Stack(config, self.shared, is_decoder=True)
        self.lm_head = nn.Linear(config.d_model, config.vocab_size, bias=False)

    def gradient_checkpointing_enable(self):
        self.encoder.gradient_checkpointing = True
        self.decoder.gradient_checkpointing = True

    def get_input_embeddings(self):
        return self.shared

    def enable_input_require_grads(self):
        def make_inputs_require_grads(module, input, output):
            output.requires_grad_(True)
        self._require_grads_hook = self.get_input_embeddings().register_forward_hook(make_inputs_require_grads)

    def forward(self, input_ids, labels):
        enc = self.encoder(input_ids)
        decoder_input_ids = torch.cat([torch.zeros_like(labels[:, :1]), labels[:, :-1]], dim=1)
        dec = self.decoder(decoder_input_ids, encoder_hidden_states=enc)
        lm_logits = self.lm_head(dec * (self.config.d_model ** -0.5))
        loss = F.cross_entropy(lm_logits.view(-1, lm_logits.size(-1)), labels.view(-1))
        return SimpleNamespace(loss=loss, logits=lm_logits)


class LoraLinear(nn.Module):
    """Stand-in for peft's lora.Linear wrapping a frozen base layer."""
    def __init__(self, base, r, lora_alpha, lora_dropout):
        super().__init__()
        self.base_layer = base
        self.lora_A = nn.Linear(base.in_features, r, bias=False)
        self.lora_B = nn.Linear(r, base.out_features, bias=False)
        nn.init.kaiming_uniform_(self.lora_A.weight, a=math.sqrt(5))
        nn.init.zeros_(self.lora_B.weight)
        self.scaling = lora_alpha / r
        self.dropout = nn.Dropout(lora_dropout)

    def forward(self, x):
        return self.base_layer(x) + self.lora_B(self.lora_A(self.dropout(x))) * self.scaling


def get_peft_model(model, lora_config):
    """Stand-in for peft.get_peft_model: freeze the base model, inject LoRA into target modules."""
    for p in model.parameters():
        p.requires_grad = False
    for module in list(model.modules()):
        for name, child in list(module.named_children()):
            if name in lora_config.target_modules and isinstance(child, nn.Linear):
                setattr(module, name, LoraLinear(child, lora_config.r, lora_config.lora_alpha,
                                                 lora_config.lora_dropout))
    return model


class Seq2SeqTrainer:
    """Stand-in for transformers.Seq2SeqTrainer's training loop."""
    def __init__(self, model, args, train_dataset):
        self.model, self.args, self.train_dataset = model, args, train_dataset
        if args.gradient_checkpointing:
            model.gradient_checkpointing_enable()
        self.optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad],
                                           lr=args.learning_rate)

    def training_step(self, model, inputs):
        model.train()
        loss = model(**inputs).loss
        loss.backward()  # expect: GG104
        return loss.detach()

    def train(self):
        for epoch in range(self.args.num_train_epochs):
            for inputs in self.train_dataset:
                self.training_step(self.model, inputs)
                self.optimizer.step()
                self.optimizer.zero_grad()


config = SimpleNamespace(vocab_size=64, d_model=32, num_heads=4, num_layers=2)
model = T5ForConditionalGeneration(config)
lora_config = SimpleNamespace(r=16, lora_alpha=32, target_modules=["q", "v"], lora_dropout=0.05,
                              bias="none", task_type="SEQ_2_SEQ_LM")
model = get_peft_model(model, lora_config)
training_args = SimpleNamespace(gradient_checkpointing=True, learning_rate=1e-3, num_train_epochs=1)
train_dataset = [{"input_ids": torch.randint(0, 64, (2, 10)), "labels": torch.randint(0, 64, (2, 6))}
                 for _ in range(2)]
trainer = Seq2SeqTrainer(model=model, args=training_args, train_dataset=train_dataset)
trainer.train()
