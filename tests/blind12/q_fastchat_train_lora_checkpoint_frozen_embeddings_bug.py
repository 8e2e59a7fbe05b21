# Source: https://github.com/lm-sys/FastChat/issues/581
"""The user runs (a slightly modified) FastChat `train_lora.py`: LLaMA with PEFT LoRA adapters
on q_proj/v_proj, trained by the HF Trainer with `gradient_checkpointing=True`. The base model is
frozen, so the embeddings' output does not require grad; the reentrant checkpoint of each decoder
layer then returns outputs without a graph (the LoRA weights inside are not its inputs), the loss
has no grad_fn and the Trainer's `loss.backward()` raises "element 0 of tensors does not require
grad and does not have a grad_fn". Fix (PR 1489, which closed the issue): call
`model.enable_input_require_grads()` when gradient checkpointing is on. transformers' LLaMA and
Trainer, peft and the data module are small CPU stand-ins written in the file; deepspeed's ZeRO-3
helpers are kept but find no ZeRO parameters.
"""
from dataclasses import dataclass, field
import logging
import math
import typing

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.checkpoint


# ---- stand-ins for transformers -------------------------------------------------------------
@dataclass
class ModelArguments:
    model_name_or_path: str = "tiny-llama"


@dataclass
class DataArguments:
    data_path: str = "dummy.json"
    num_examples: int = 8
    seq_len: int = 12


@dataclass
class TrainingArguments:
    output_dir: str = "unused"
    num_train_epochs: int = 1
    per_device_train_batch_size: int = 4
    learning_rate: float = 2e-4
    gradient_checkpointing: bool = True
    deepspeed: typing.Optional[str] = None
    local_rank: int = -1


class CausalLMOutput:
    def __init__(self, loss, logits):
        self.loss, self.logits = loss, logits


class LlamaDecoderLayer(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.input_layernorm = nn.LayerNorm(hidden)
        self.q_proj = nn.Linear(hidden, hidden, bias=False)
        self.k_proj = nn.Linear(hidden, hidden, bias=False)
        self.v_proj = nn.Linear(hidden, hidden, bias=False)
        self.o_proj = nn.Linear(hidden, hidden, bias=False)
        self.post_attention_layernorm = nn.LayerNorm(hidden)
        self.mlp = nn.Sequential(nn.Linear(hidden, 2 * hidden, bias=False), nn.SiLU(), nn.Linear(2 * hidden, hidden, bias=False))

    def forward(self, hidden_states):
        h = self.input_layernorm(hidden_states)
        q, k, v = self.q_proj(h), self.k_proj(h), self.v_proj(h)
        scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
        mask = torch.triu(torch.ones(scores.shape[-2:], dtype=torch.bool), 1)
        attn = scores.masked_fill(mask, float("-inf")).softmax(-1)
        hidden_states = hidden_states + self.o_proj(attn @ v)
        return hidden_states + self.mlp(self.post_attention_layernorm(hidden_states))


class LlamaForCausalLM(nn.Module):
    def __init__(self, vocab_size=32, hidden=16, num_layers=2):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab_size, hidden)
        self.layers = nn.ModuleList([LlamaDecoderLayer(hidden) for _ in range(num_layers)])
        self.norm = nn.LayerNorm(hidden)
        self.lm_head = nn.Linear(hidden, vocab_size, bias=False)
        self.gradient_checkpointing = False

    @classmethod
    def from_pretrained(cls, name):
        torch.manual_seed(0)
        return cls()

    def gradient_checkpointing_enable(self):
        self.gradient_checkpointing = True

    def enable_input_require_grads(self):
        def make_inputs_require_grads(module, input, output):
            output.requires_grad_(True)
        self._require_grads_hook = self.embed_tokens.register_forward_hook(make_inputs_require_grads)

    def forward(self, input_ids, labels=None):
        hidden_states = self.embed_tokens(input_ids)
        for layer in self.layers:
            if self.gradient_checkpointing and self.training:
                hidden_states = torch.utils.checkpoint.checkpoint(layer, hidden_states, use_reentrant=True)
            else:
                hidden_states = layer(hidden_states)
        logits = self.lm_head(self.norm(hidden_states))
        loss = None
        if labels is not None:
            loss = F.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]), labels[:, 1:].reshape(-1))
        return CausalLMOutput(loss, logits)


class Trainer:
    def __init__(self, model, args, train_dataset=None, eval_dataset=None, data_collator=None):
        self.model, self.args = model, args
        self.train_dataset, self.data_collator = train_dataset, data_collator

    def training_step(self, model, inputs):
        model.train()
        outputs = model(**inputs)
        loss = outputs.loss
        loss.backward()  # expect: GG104
        return loss.detach()

    def train(self):
        if self.args.gradient_checkpointing:
            self.model.gradient_checkpointing_enable()
        optimizer = torch.optim.AdamW([p for p in self.model.parameters() if p.requires_grad],
                                      lr=self.args.learning_rate)
        bs = self.args.per_device_train_batch_size
        for epoch in range(self.args.num_train_epochs):
            for start in range(0, len(self.train_dataset), bs):
                inputs = self.data_collator(self.train_dataset[start:start + bs])
                loss = self.training_step(self.model, inputs)
                optimizer.step()
                optimizer.zero_grad()
                logging.info("loss %.4f", loss.item())


# ---- stand-ins for peft ---------------------------------------------------------------------
@dataclass
class LoraConfig:
    r: int = 8
    lora_alpha: int = 16
    target_modules: typing.List[str] = field(default_factory=lambda: ["q_proj", "v_proj"])
    lora_dropout: float = 0.05
    bias: str = "none"
    task_type: str = "CAUSAL_LM"


class LoraLinear(nn.Module):
    def __init__(self, base, r, alpha, dropout):
        super().__init__()
        self.base_layer = base
        self.lora_A = nn.Linear(base.in_features, r, bias=False)
        self.lora_B = nn.Linear(r, base.out_features, bias=False)
        nn.init.normal_(self.lora_B.weight, std=0.01)
        self.lora_dropout = nn.Dropout(dropout)
        self.scaling = alpha / r

    def forward(self, x):
        return self.base_layer(x) + self.lora_B(self.lora_A(self.lora_dropout(x))) * self.scaling


class PeftModel(nn.Module):
    def __init__(self, model):
        super().__init__()
        self.base_model = model

    def forward(self, **kwargs):
        return self.base_model(**kwargs)

    def gradient_checkpointing_enable(self):
        self.base_model.gradient_checkpointing_enable()

    def enable_input_require_grads(self):
        self.base_model.enable_input_require_grads()

    def print_trainable_parameters(self):
        trainable = sum(p.numel() for p in self.parameters() if p.requires_grad)
        total = sum(p.numel() for p in self.parameters())
        print(f"trainable params: {trainable} || all params: {total}")


def get_peft_model(model, config):
    for p in model.parameters():
        p.requires_grad_(False)
    for layer in model.layers:
        for name in config.target_modules:
            setattr(layer, name, LoraLinear(getattr(layer, name), config.r, config.lora_alpha, config.lora_dropout))
    return PeftModel(model)


def make_supervised_data_module(tokenizer, data_args):
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(0, 32, (data_args.num_examples, data_args.seq_len), generator=g)

    def collate(rows):
        return dict(input_ids=rows, labels=rows.clone())
    return dict(train_dataset=ids, eval_dataset=None, data_collator=collate)


# ---- the user's train_lora.py ----------------------------------------------------------------
@dataclass
class LoraArguments:
    lora_r: int = 8
    lora_alpha: int = 16
    lora_dropout: float = 0.05
    lora_target_modules: typing.List[str] = field(
        default_factory=lambda: ["q_proj", "v_proj"]
    )
    lora_weight_path: str = ""
    bias: str = "none"


def maybe_zero_3(param):
    if hasattr(param, "ds_id"):
        raise NotImplementedError("ZeRO-3 parameters are not part of this stand-in")
    return param.detach().cpu().clone()


# Borrowed from peft.utils.get_peft_model_state_dict
def get_peft_state_maybe_zero_3(state_dict, bias):
    if bias == "none":
        to_return = {
            k: state_dict[k].cpu().clone() for k in state_dict if "lora_" in k
        }
    elif bias == "all":
        to_return = {
            k: state_dict[k] for k in state_dict if "lora_" in k or "bias" in k
        }
    else:
        raise NotImplementedError
    to_return = {k: maybe_zero_3(v) for k, v in to_return.items()}
    return to_return


def train():
    model_args, data_args = ModelArguments(), DataArguments()
    training_args, lora_args = TrainingArguments(), LoraArguments()

    model = LlamaForCausalLM.from_pretrained(model_args.model_name_or_path)
    lora_config = LoraConfig(
        r=lora_args.lora_r,
        lora_alpha=lora_args.lora_alpha,
        target_modules=lora_args.lora_target_modules,
        lora_dropout=lora_args.lora_dropout,
        bias=lora_args.bias,
        task_type="CAUSAL_LM",
    )
    model = get_peft_model(model, lora_config)
    model.print_trainable_parameters()

    tokenizer = None
    data_module = make_supervised_data_module(tokenizer=tokenizer, data_args=data_args)
    trainer = Trainer(model=model, args=training_args, **data_module)

    model.base_model.config_use_cache = False
    trainer.train()

    state_dict = get_peft_state_maybe_zero_3(dict(model.named_parameters()), lora_args.bias)
    print(sorted(state_dict)[:2])


if __name__ == "__main__":
    train()
