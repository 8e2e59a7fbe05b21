# Source: https://github.com/huggingface/peft/commit/86eac2687a39a531212cb81465a95956deab6cd8
"""PEFT LoRA on `embed_tokens` after `prepare_model_for_kbit_training`
(peft before commit 86eac26, PR #1372).

The usual recipe calls `prepare_model_for_kbit_training(model)`, which freezes
the base weights and, for gradient checkpointing, calls transformers'
`model.enable_input_require_grads()`: a forward hook on the input embedding
module that does `output.requires_grad_(True)`.  Then `get_peft_model` wraps
that same nn.Embedding in `lora.Embedding`.  In `lora.Embedding.forward`,
`result = self.base_layer(x)` now returns a leaf that requires grad (frozen
embedding output + the hook), and the adapter is added with
`result += (after_A @ embedding_B) * scaling`: "a leaf Variable that requires
grad is being used in an in-place operation".

The commit changes it to `result = result + (after_A @ embedding_B) * scaling`.
transformers / peft are replaced by small stand-ins with the same structure.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint


# ----------------------------------------------------------------- "transformers"
class TinyConfig:
    vocab_size = 64
    hidden_size = 32
    num_heads = 4
    num_layers = 2


class Attention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.num_heads = config.num_heads
        self.q_proj = nn.Linear(config.hidden_size, config.hidden_size, bias=False)
        self.k_proj = nn.Linear(config.hidden_size, config.hidden_size, bias=False)
        self.v_proj = nn.Linear(config.hidden_size, config.hidden_size, bias=False)
        self.o_proj = nn.Linear(config.hidden_size, config.hidden_size, bias=False)

    def forward(self, hidden_states):
        b, n, d = hidden_states.shape
        h = self.num_heads
        q = self.q_proj(hidden_states).view(b, n, h, d // h).transpose(1, 2)
        k = self.k_proj(hidden_states).view(b, n, h, d // h).transpose(1, 2)
        v = self.v_proj(hidden_states).view(b, n, h, d // h).transpose(1, 2)
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.o_proj(out.transpose(1, 2).reshape(b, n, d))


class DecoderLayer(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.input_layernorm = nn.LayerNorm(config.hidden_size)
        self.self_attn = Attention(config)
        self.post_attention_layernorm = nn.LayerNorm(config.hidden_size)
        self.mlp = nn.Sequential(nn.Linear(config.hidden_size, 4 * config.hidden_size), nn.GELU(),
                                 nn.Linear(4 * config.hidden_size, config.hidden_size))

    def forward(self, hidden_states):
        hidden_states = hidden_states + self.self_attn(self.input_layernorm(hidden_states))
        hidden_states = hidden_states + self.mlp(self.post_attention_layernorm(hidden_states))
        return hidden_states


class TinyModel(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.embed_tokens = nn.Embedding(config.vocab_size, config.hidden_size)
        self.layers = nn.ModuleList([DecoderLayer(config) for _ in range(config.num_layers)])
        self.norm = nn.LayerNorm(config.hidden_size)
        self.gradient_checkpointing = False

    def forward(self, input_ids):
        hidden_states = self.embed_tokens(input_ids)
        for layer in self.layers:
            if self.gradient_checkpointing and self.training:
                hidden_states = checkpoint(layer, hidden_states, use_reentrant=True)
            else:
                hidden_states = layer(hidden_states)
        return self.norm(hidden_states)


class TinyForCausalLM(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.model = TinyModel(config)
        self.lm_head = nn.Linear(config.hidden_size, config.vocab_size, bias=False)

    def get_input_embeddings(self):
        return self.model.embed_tokens

    def enable_input_require_grads(self):
        def make_inputs_require_grads(module, input, output):
            output.requires_grad_(True)

        self._require_grads_hook = self.get_input_embeddings().register_forward_hook(make_inputs_require_grads)

    def gradient_checkpointing_enable(self):
        self.model.gradient_checkpointing = True

    def forward(self, input_ids, labels=None):
        logits = self.lm_head(self.model(input_ids))
        loss = None
        if labels is not None:
            shift_logits = logits[:, :-1, :].reshape(-1, self.config.vocab_size)
            shift_labels = labels[:, 1:].reshape(-1)
            loss = F.cross_entropy(shift_logits, shift_labels)
        return loss, logits


# ----------------------------------------------------------------- "peft"
class LoraLayer:
    def __init__(self, base_layer):
        self.base_layer = base_layer
        self.r = {}
        self.lora_alpha = {}
        self.scaling = {}
        self.lora_dropout = nn.ModuleDict({})
        self.lora_A = nn.ModuleDict({})
        self.lora_B = nn.ModuleDict({})
        self.lora_embedding_A = nn.ParameterDict({})
        self.lora_embedding_B = nn.ParameterDict({})
        self.active_adapters = ["default"]
        self.disable_adapters = False
        self.merged = False
        if isinstance(base_layer, nn.Linear):
            self.in_features, self.out_features = base_layer.in_features, base_layer.out_features
        elif isinstance(base_layer, nn.Embedding):
            self.in_features, self.out_features = base_layer.num_embeddings, base_layer.embedding_dim

    def get_base_layer(self):
        return self.base_layer


class Linear(nn.Module, LoraLayer):
    def __init__(self, base_layer, adapter_name, r=0, lora_alpha=1, lora_dropout=0.0):
        super().__init__()
        LoraLayer.__init__(self, base_layer)
        self.r[adapter_name] = r
        self.lora_alpha[adapter_name] = lora_alpha
        self.lora_dropout[adapter_name] = nn.Dropout(p=lora_dropout) if lora_dropout > 0.0 else nn.Identity()
        self.lora_A[adapter_name] = nn.Linear(self.in_features, r, bias=False)
        self.lora_B[adapter_name] = nn.Linear(r, self.out_features, bias=False)
        self.scaling[adapter_name] = lora_alpha / r
        nn.init.kaiming_uniform_(self.lora_A[adapter_name].weight, a=math.sqrt(5))
        nn.init.zeros_(self.lora_B[adapter_name].weight)

    def forward(self, x, *args, **kwargs):
        result = self.base_layer(x, *args, **kwargs)
        torch_result_dtype = result.dtype
        for active_adapter in self.active_adapters:
            if active_adapter not in self.lora_A.keys():
                continue
            lora_A = self.lora_A[active_adapter]
            lora_B = self.lora_B[active_adapter]
            dropout = self.lora_dropout[active_adapter]
            scaling = self.scaling[active_adapter]
            x = x.to(lora_A.weight.dtype)
            result = result + lora_B(lora_A(dropout(x))) * scaling
        result = result.to(torch_result_dtype)
        return result


class Embedding(nn.Module, LoraLayer):
    def __init__(self, base_layer, adapter_name, r=0, lora_alpha=1, lora_dropout=0.0):
        super().__init__()
        LoraLayer.__init__(self, base_layer)
        self.r[adapter_name] = r
        self.lora_alpha[adapter_name] = lora_alpha
        self.lora_dropout[adapter_name] = nn.Dropout(p=lora_dropout) if lora_dropout > 0.0 else nn.Identity()
        weight_A = torch.randn((r, self.in_features))
        weight_B = torch.randn((self.out_features, r))
        self.lora_embedding_A[adapter_name] = nn.Parameter(weight_A)
        self.lora_embedding_B[adapter_name] = nn.Parameter(weight_B)
        self.scaling[adapter_name] = lora_alpha / r
        nn.init.zeros_(self.lora_embedding_A[adapter_name])
        nn.init.normal_(self.lora_embedding_B[adapter_name])

    def _embed(self, input, weight):
        base_layer = self.get_base_layer()
        return F.embedding(input, weight, padding_idx=base_layer.padding_idx, max_norm=base_layer.max_norm,
                           norm_type=base_layer.norm_type, scale_grad_by_freq=base_layer.scale_grad_by_freq,
                           sparse=base_layer.sparse)

    def forward(self, x, *args, **kwargs):
        if self.disable_adapters:
            result = self.base_layer(x, *args, **kwargs)
        elif self.merged:
            result = self.base_layer(x, *args, **kwargs)
        else:
            result = self.base_layer(x, *args, **kwargs)
            torch_result_dtype = result.dtype
            for active_adapter in self.active_adapters:
                if active_adapter not in self.lora_embedding_A:
                    continue
                embedding_A = self.lora_embedding_A[active_adapter].T
                embedding_B = self.lora_embedding_B[active_adapter].T
                scaling = self.scaling[active_adapter]
                after_A = self._embed(x, embedding_A)
                result += (after_A @ embedding_B) * scaling  # expect: GG108
            result = result.to(torch_result_dtype)
        return result


class LoraConfig:
    def __init__(self, r=8, lora_alpha=16, lora_dropout=0.0, target_modules=()):
        self.r = r
        self.lora_alpha = lora_alpha
        self.lora_dropout = lora_dropout
        self.target_modules = list(target_modules)


def prepare_model_for_kbit_training(model, use_gradient_checkpointing=True):
    for name, param in model.named_parameters():
        param.requires_grad = False
    if use_gradient_checkpointing:
        if hasattr(model, "enable_input_require_grads"):
            model.enable_input_require_grads()
        model.gradient_checkpointing_enable()
    return model


def get_peft_model(model, peft_config, adapter_name="default"):
    targets = [name for name, _ in model.named_modules()
               if any(name.endswith(t) for t in peft_config.target_modules)]
    for name in targets:
        parent_name, _, child_name = name.rpartition(".")
        parent = model.get_submodule(parent_name)
        target = getattr(parent, child_name)
        kwargs = dict(r=peft_config.r, lora_alpha=peft_config.lora_alpha, lora_dropout=peft_config.lora_dropout)
        if isinstance(target, nn.Embedding):
            new_module = Embedding(target, adapter_name, **kwargs)
        else:
            new_module = Linear(target, adapter_name, **kwargs)
        setattr(parent, child_name, new_module)
    for n, p in model.named_parameters():
        p.requires_grad = "lora_" in n
    return model


# ----------------------------------------------------------------- user script
def train(model, batches, epochs=2, lr=2e-4):
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=lr)
    model.train()
    for epoch in range(epochs):
        for step, input_ids in enumerate(batches):
            loss, _ = model(input_ids, labels=input_ids)
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
        print(f"epoch {epoch} loss {loss.item():.4f}")


def main():
    torch.manual_seed(0)
    config = TinyConfig()
    model = TinyForCausalLM(config)
    model = prepare_model_for_kbit_training(model)
    lora_config = LoraConfig(r=4, lora_alpha=8, lora_dropout=0.05,
                             target_modules=["embed_tokens", "q_proj", "v_proj"])
    model = get_peft_model(model, lora_config)
    batches = [torch.randint(0, config.vocab_size, (2, 12)) for _ in range(3)]
    train(model, batches)


if __name__ == "__main__":
    main()
