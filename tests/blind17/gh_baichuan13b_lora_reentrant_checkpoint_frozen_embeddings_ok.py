# Source: https://github.com/baichuan-inc/Baichuan-13B/issues/14
"""Fixed twin (the stored thread shows no answer; the fix peft and transformers give for this: `model.enable_input_require_grads()`, a hook that makes the embeddings' output require grad). Baichuan-13B LoRA fine-tuning: the user wraps the model with peft LoRA on `W_pack`, with gradient
checkpointing on (Baichuan's modeling file checkpoints each decoder layer with the reentrant
`torch.utils.checkpoint.checkpoint`). The embeddings are frozen, so no input of a checkpointed layer
requires grad ("None of the inputs have requires_grad=True"), the LoRA weights inside get no graph, and
the Trainer's `loss.backward()` raises "element 0 of tensors does not require grad and does not have a
grad_fn". Fix: `model.enable_input_require_grads()` before `get_peft_model`. peft, transformers' Trainer
and the 13B model are small stand-ins written here; random token ids, CPU.
"""
import math
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.checkpoint


class BaichuanConfig:
    vocab_size = 64
    hidden_size = 32
    intermediate_size = 64
    num_attention_heads = 4
    num_hidden_layers = 2
    rms_norm_eps = 1e-6


class RMSNorm(nn.Module):
    def __init__(self, hidden_size, epsilon=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.epsilon = epsilon

    def forward(self, hidden_states):
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        return self.weight * (hidden_states * torch.rsqrt(variance + self.epsilon))


def _get_alibi_mask(n_head, max_pos):
    slopes = torch.Tensor([2 ** (-8 * (i + 1) / n_head) for i in range(n_head)])
    alibi = slopes.unsqueeze(1).unsqueeze(1) * torch.arange(max_pos).unsqueeze(0).unsqueeze(0).expand(n_head, -1, -1)
    future = torch.triu(torch.full([max_pos, max_pos], float("-inf")), 1)
    return future.unsqueeze(0) + alibi


class MLP(nn.Module):
    def __init__(self, hidden_size, intermediate_size):
        super().__init__()
        self.gate_proj = nn.Linear(hidden_size, intermediate_size, bias=False)
        self.down_proj = nn.Linear(intermediate_size, hidden_size, bias=False)
        self.up_proj = nn.Linear(hidden_size, intermediate_size, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class BaichuanAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.hidden_size = config.hidden_size
        self.num_heads = config.num_attention_heads
        self.head_dim = self.hidden_size // self.num_heads
        self.W_pack = nn.Linear(self.hidden_size, 3 * self.hidden_size, bias=False)
        self.o_proj = nn.Linear(self.num_heads * self.head_dim, self.hidden_size, bias=False)

    def forward(self, hidden_states, attention_mask=None):
        bsz, q_len, _ = hidden_states.size()
        proj = self.W_pack(hidden_states).unflatten(-1, (3, self.hidden_size)).unsqueeze(0).transpose(0, -2).squeeze(-2)
        q, k, v = [p.view(bsz, q_len, self.num_heads, self.head_dim).transpose(1, 2) for p in proj]
        attn = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(self.head_dim)
        if attention_mask is not None:
            attn = attn + attention_mask
        attn = torch.softmax(attn, dim=-1)
        out = torch.matmul(attn, v).transpose(1, 2).reshape(bsz, q_len, self.hidden_size)
        return self.o_proj(out)


class BaichuanLayer(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.self_attn = BaichuanAttention(config)
        self.mlp = MLP(config.hidden_size, config.intermediate_size)
        self.input_layernorm = RMSNorm(config.hidden_size, config.rms_norm_eps)
        self.post_attention_layernorm = RMSNorm(config.hidden_size, config.rms_norm_eps)

    def forward(self, hidden_states, attention_mask=None, output_attentions=False, use_cache=None):
        residual = hidden_states
        hidden_states = self.self_attn(self.input_layernorm(hidden_states), attention_mask)
        hidden_states = residual + hidden_states
        residual = hidden_states
        hidden_states = residual + self.mlp(self.post_attention_layernorm(hidden_states))
        return (hidden_states,)


class BaichuanModel(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.n_head = config.num_attention_heads
        self.embed_tokens = nn.Embedding(config.vocab_size, config.hidden_size)
        self.layers = nn.ModuleList([BaichuanLayer(config) for _ in range(config.num_hidden_layers)])
        self.norm = RMSNorm(config.hidden_size, config.rms_norm_eps)
        self.gradient_checkpointing = False

    def forward(self, input_ids, output_attentions=False):
        seq_length = input_ids.shape[1]
        inputs_embeds = self.embed_tokens(input_ids)
        alibi_mask = _get_alibi_mask(self.n_head, seq_length)
        hidden_states = inputs_embeds
        for decoder_layer in self.layers:
            if self.gradient_checkpointing and self.training:
                def create_custom_forward(module):
                    def custom_forward(*inputs):
                        return module(*inputs, output_attentions, None)
                    return custom_forward
                layer_outputs = torch.utils.checkpoint.checkpoint(
                    create_custom_forward(decoder_layer), hidden_states, alibi_mask, use_reentrant=True)
            else:
                layer_outputs = decoder_layer(hidden_states, alibi_mask, output_attentions, None)
            hidden_states = layer_outputs[0]
        return self.norm(hidden_states)


class BaichuanForCausalLM(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.model = BaichuanModel(config)
        self.lm_head = nn.Linear(config.hidden_size, config.vocab_size, bias=False)

    def get_input_embeddings(self):
        return self.model.embed_tokens

    def gradient_checkpointing_enable(self):
        self.model.gradient_checkpointing = True

    def enable_input_require_grads(self):
        """transformers' PreTrainedModel.enable_input_require_grads (stand-in)."""
        def make_inputs_require_grads(module, input, output):
            output.requires_grad_(True)
        self._require_grads_hook = self.get_input_embeddings().register_forward_hook(make_inputs_require_grads)

    def forward(self, input_ids, labels=None):
        logits = self.lm_head(self.model(input_ids))
        loss = None
        if labels is not None:
            shift_logits = logits[..., :-1, :].contiguous()
            shift_labels = labels[..., 1:].contiguous()
            loss = F.cross_entropy(shift_logits.view(-1, shift_logits.size(-1)), shift_labels.view(-1))
        return {"loss": loss, "logits": logits}


# ---- peft stand-in: LoraConfig / get_peft_model on W_pack ----
class LoraConfig:
    def __init__(self, r=8, lora_alpha=16, target_modules=("W_pack",), lora_dropout=0.05):
        self.r, self.lora_alpha, self.target_modules, self.lora_dropout = r, lora_alpha, target_modules, lora_dropout


class LoraLinear(nn.Module):
    def __init__(self, base: nn.Linear, r, alpha, dropout):
        super().__init__()
        self.base = base
        self.lora_A = nn.Linear(base.in_features, r, bias=False)
        self.lora_B = nn.Linear(r, base.out_features, bias=False)
        nn.init.zeros_(self.lora_B.weight)
        self.scaling = alpha / r
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        return self.base(x) + self.lora_B(self.lora_A(self.dropout(x))) * self.scaling


def get_peft_model(model, config):
    for p in model.parameters():
        p.requires_grad = False
    for name, module in list(model.named_modules()):
        for child_name, child in list(module.named_children()):
            if child_name in config.target_modules and isinstance(child, nn.Linear):
                setattr(module, child_name, LoraLinear(child, config.r, config.lora_alpha, config.lora_dropout))
    return model


# ---- transformers.Trainer stand-in ----
class Trainer:
    def __init__(self, model, train_dataset, lr=2e-4, batch_size=2):
        self.model, self.train_dataset, self.batch_size = model, train_dataset, batch_size
        self.optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=lr)

    def compute_loss(self, model, inputs):
        return model(**inputs)["loss"]

    def training_step(self, model, inputs):
        model.train()
        loss = self.compute_loss(model, inputs)
        loss.backward()
        return loss.detach()

    def train(self):
        for i in range(0, len(self.train_dataset), self.batch_size):
            ids = torch.stack(self.train_dataset[i:i + self.batch_size])
            loss = self.training_step(self.model, {"input_ids": ids, "labels": ids})
            self.optimizer.step()
            self.optimizer.zero_grad()
            print("step", i // self.batch_size, "loss", round(loss.item(), 4))


def main():
    torch.manual_seed(0)
    config = BaichuanConfig()
    model = BaichuanForCausalLM(config)
    model.gradient_checkpointing_enable()
    model.enable_input_require_grads()
    lora_config = LoraConfig(r=4, lora_alpha=16, target_modules=["W_pack"], lora_dropout=0.05)
    model = get_peft_model(model, lora_config)
    train_dataset = [torch.randint(0, config.vocab_size, (12,)) for _ in range(6)]
    trainer = Trainer(model=model, train_dataset=train_dataset)
    trainer.train()


if __name__ == "__main__":
    main()
