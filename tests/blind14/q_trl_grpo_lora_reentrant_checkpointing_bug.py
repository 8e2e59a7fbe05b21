# Source: https://github.com/huggingface/trl/issues/3150
"""GRPO on Qwen2-0.5B-Instruct with a LoRA adapter: the reporter wraps the causal LM with
`get_peft_model(model, lora_config)` and trains it with TRL's `GRPOTrainer`, with
`gradient_checkpointing=True` and `use_reentrant=True` in the `GRPOConfig`. PEFT freezes the base
model, so the input embeddings do not require grad; reentrant checkpointing of each decoder layer
then records nothing (none of its inputs requires grad), the per-token log-probs carry no graph
and the GRPO loss's backward raises "element 0 of tensors does not require grad and does not have
a grad_fn". The reporter's fix: `model.enable_input_require_grads()` before `get_peft_model`.
transformers (a two-layer causal LM), peft (LoRA on q/v projections), TRL's GRPOConfig/GRPOTrainer
(group sampling, group-normalized advantages, the clipped policy loss) and the reward function are
small CPU stand-ins written in the file; no vLLM, DeepSpeed or wandb.
"""
import math
from types import SimpleNamespace

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

# ----------------------------- stand-ins: transformers -----------------------------


class DecoderLayer(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.q_proj, self.k_proj, self.v_proj, self.o_proj = (nn.Linear(d, d) for _ in range(4))
        self.mlp = nn.Sequential(nn.Linear(d, 2 * d), nn.GELU(), nn.Linear(2 * d, d))
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)

    def forward(self, h):
        x = self.ln1(h)
        q, k, v = self.q_proj(x), self.k_proj(x), self.v_proj(x)
        T = h.shape[1]
        att = (q @ k.transpose(1, 2)) / math.sqrt(q.shape[-1])
        att = att.masked_fill(torch.triu(torch.ones(T, T, dtype=torch.bool), 1), float('-inf'))
        h = h + self.o_proj(att.softmax(-1) @ v)
        return h + self.mlp(self.ln2(h))


class AutoModelForCausalLM(nn.Module):
    def __init__(self, vocab=32, d=16, n_layers=2):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, d)
        self.layers = nn.ModuleList([DecoderLayer(d) for _ in range(n_layers)])
        self.lm_head = nn.Linear(d, vocab, bias=False)
        self.gradient_checkpointing, self.use_reentrant = False, True

    @classmethod
    def from_pretrained(cls, name, torch_dtype=None):
        torch.manual_seed(0)
        return cls()

    def get_input_embeddings(self):
        return self.embed_tokens

    def gradient_checkpointing_enable(self, gradient_checkpointing_kwargs=None):
        self.gradient_checkpointing = True
        self.use_reentrant = (gradient_checkpointing_kwargs or {}).get('use_reentrant', True)

    def enable_input_require_grads(self):
        def make_inputs_require_grads(module, input, output):
            output.requires_grad_(True)
        self._require_grads_hook = self.get_input_embeddings().register_forward_hook(make_inputs_require_grads)

    def forward(self, input_ids):
        h = self.embed_tokens(input_ids)
        for layer in self.layers:
            if self.gradient_checkpointing and self.training:
                h = checkpoint(layer, h, use_reentrant=self.use_reentrant)
            else:
                h = layer(h)
        return SimpleNamespace(logits=self.lm_head(h))

    @torch.no_grad()
    def generate(self, input_ids, max_new_tokens):
        for _ in range(max_new_tokens):
            probs = self(input_ids).logits[:, -1].softmax(-1)
            input_ids = torch.cat([input_ids, torch.multinomial(probs, 1)], dim=1)
        return input_ids

# ----------------------------- stand-ins: peft -----------------------------


class LoraConfig(SimpleNamespace):
    pass


class LoraLinear(nn.Module):
    def __init__(self, base, r, alpha):
        super().__init__()
        self.base = base
        self.lora_A = nn.Linear(base.in_features, r, bias=False)
        self.lora_B = nn.Linear(r, base.out_features, bias=False)
        nn.init.zeros_(self.lora_B.weight)
        self.scaling = alpha / r

    def forward(self, x):
        return self.base(x) + self.lora_B(self.lora_A(x)) * self.scaling


def get_peft_model(model, config):
    for p in model.parameters():
        p.requires_grad_(False)
    for layer in model.layers:
        for name in ('q_proj', 'v_proj'):
            setattr(layer, name, LoraLinear(getattr(layer, name), config.r, config.lora_alpha))
    return model

# ----------------------------- stand-ins: trl -----------------------------


class GRPOConfig(SimpleNamespace):
    pass


class GRPOTrainer:
    def __init__(self, model, reward_funcs, args, train_dataset):
        self.model, self.reward_funcs, self.args, self.train_dataset = model, reward_funcs, args, train_dataset
        if args.gradient_checkpointing:
            model.gradient_checkpointing_enable(args.gradient_checkpointing_kwargs)
        self.optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=args.learning_rate)

    def _get_per_token_logps(self, model, input_ids, logits_to_keep):
        logits = model(input_ids).logits[:, :-1]
        logps = logits.log_softmax(-1).gather(-1, input_ids[:, 1:].unsqueeze(-1)).squeeze(-1)
        return logps[:, -logits_to_keep:]

    def _generate_and_score_completions(self, prompts):
        G = self.args.num_generations
        prompt_ids = prompts.repeat_interleave(G, dim=0)
        self.model.eval()
        ids = self.model.generate(prompt_ids, self.args.max_completion_length)
        self.model.train()
        completion_ids = ids[:, prompt_ids.shape[1]:]
        rewards = torch.stack([f(completion_ids) for f in self.reward_funcs]).sum(0)
        grouped = rewards.view(-1, G)
        advantages = (rewards - grouped.mean(1).repeat_interleave(G)) / (grouped.std(1).repeat_interleave(G) + 1e-4)
        return ids, completion_ids, advantages

    def compute_loss(self, model, ids, completion_ids, advantages):
        per_token_logps = self._get_per_token_logps(model, ids, completion_ids.shape[1])
        old_per_token_logps = per_token_logps.detach()
        coef_1 = torch.exp(per_token_logps - old_per_token_logps)
        coef_2 = torch.clamp(coef_1, 1 - 0.2, 1 + 0.2)
        per_token_loss = -torch.min(coef_1 * advantages.unsqueeze(1), coef_2 * advantages.unsqueeze(1))
        return per_token_loss.mean()

    def train(self):
        for step, prompts in enumerate(self.train_dataset):
            ids, completion_ids, advantages = self._generate_and_score_completions(prompts)
            loss = self.compute_loss(self.model, ids, completion_ids, advantages)
            self.optimizer.zero_grad()
            loss.backward()  # expect: GG104
            self.optimizer.step()
            if step % self.args.logging_steps == 0:
                print('step', step, 'loss', loss.item())

# ----------------------------- the reporter's script -----------------------------


def reward_len(completion_ids):
    return -(completion_ids.float() - 10).abs().mean(-1)


model_name = "/netcache/huggingface/Qwen2-0.5B-Instruct"
batch_size = 4
num_generations = 4

model = AutoModelForCausalLM.from_pretrained(
    model_name,
    torch_dtype="bfloat16",
)

lora_config = LoraConfig(
    base_model_name_or_path=model_name,
    task_type="CAUSAL_LM",
    r=4,
    lora_alpha=8,
    lora_dropout=0.05,
    bias="none",
)
lora_model = get_peft_model(model, lora_config)

training_args = GRPOConfig(output_dir=f"checkpoints/{model_name}/GRPO",
                           learning_rate=1e-5,
                           max_completion_length=4,
                           logging_steps=1,
                           per_device_train_batch_size=batch_size,
                           num_generations=num_generations,
                           gradient_checkpointing=True,
                           gradient_checkpointing_kwargs=dict(use_reentrant=True))

train_dataset = [torch.randint(0, 32, (batch_size // num_generations + 1, 5)) for _ in range(2)]
trainer = GRPOTrainer(model=lora_model, reward_funcs=[reward_len], args=training_args, train_dataset=train_dataset)
trainer.train()
