# Source: https://github.com/huggingface/trl/issues/3089
"""TRL 0.15 GRPOTrainer with a LoRA adapter (use_peft=True) and `gradient_checkpointing=True`: the
first training step fails in the backward with "element 0 of tensors does not require grad and does
not have a grad_fn".

With PEFT the base model is frozen, so the input embeddings' output does not require grad. The
trainer turns on gradient checkpointing with the transformers default of the time,
`use_reentrant=True`; a reentrant checkpoint whose inputs do not require grad returns an output
that does not require grad either ("None of the inputs have requires_grad=True"), even though the
LoRA weights inside the checkpointed decoder layers do. Every decoder layer is checkpointed and
the lm_head is frozen, so the GRPO loss has no grad_fn and loss.backward() raises. The fix that TRL
adopted (explained in the thread): when a PEFT model is trained with gradient checkpointing, call
`model.enable_input_require_grads()` (a forward hook that marks the embedding output as requiring
grad); `use_reentrant=False` also works. The causal LM, LoRA injection, generation, reward function
and Trainer loop are small stand-ins that keep the GRPOTrainer structure (group sampling,
group-normalised advantages, per-token log-probs, the clipped-ratio loss, KL to the reference).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint

torch.manual_seed(0)
VOCAB, HIDDEN = 50, 16


# ---------------------------------------------------------------- model (stand-in for Llama)
class DecoderLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(HIDDEN)
        self.q_proj = nn.Linear(HIDDEN, HIDDEN)
        self.up_proj = nn.Linear(HIDDEN, 2 * HIDDEN)
        self.down_proj = nn.Linear(2 * HIDDEN, HIDDEN)

    def forward(self, h):
        h = h + self.q_proj(self.norm(h))
        return h + self.down_proj(F.silu(self.up_proj(h)))


class CausalLM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed_tokens = nn.Embedding(VOCAB, HIDDEN)
        self.layers = nn.ModuleList([DecoderLayer() for _ in range(2)])
        self.lm_head = nn.Linear(HIDDEN, VOCAB, bias=False)
        self.gradient_checkpointing = False
        self._gc_kwargs = {}

    def get_input_embeddings(self):
        return self.embed_tokens

    def gradient_checkpointing_enable(self, gradient_checkpointing_kwargs=None):
        if gradient_checkpointing_kwargs is None:
            gradient_checkpointing_kwargs = {"use_reentrant": True}   # transformers default then
        self.gradient_checkpointing = True
        self._gc_kwargs = gradient_checkpointing_kwargs

    def enable_input_require_grads(self):
        def make_inputs_require_grads(module, input, output):
            output.requires_grad_(True)
        self._require_grads_hook = self.get_input_embeddings().register_forward_hook(make_inputs_require_grads)

    def forward(self, input_ids):
        h = self.embed_tokens(input_ids)
        for layer in self.layers:
            if self.gradient_checkpointing and self.training:
                h = checkpoint(layer, h, **self._gc_kwargs)
            else:
                h = layer(h)
        return self.lm_head(h)


class LoraLinear(nn.Module):
    def __init__(self, base, r=4, lora_alpha=1):
        super().__init__()
        self.base_layer = base
        self.lora_A = nn.Linear(base.in_features, r, bias=False)
        self.lora_B = nn.Linear(r, base.out_features, bias=False)
        nn.init.normal_(self.lora_B.weight, std=0.02)
        self.scaling = lora_alpha / r ** 0.5   # use_rslora
        self.disabled = False

    def forward(self, x):
        out = self.base_layer(x)
        if not self.disabled:
            out = out + self.lora_B(self.lora_A(x)) * self.scaling
        return out


class PeftModel(nn.Module):
    def __init__(self, model, target_modules):
        super().__init__()
        self.base_model = model
        for p in model.parameters():
            p.requires_grad = False
        for layer in model.layers:
            for name in target_modules:
                if hasattr(layer, name):
                    setattr(layer, name, LoraLinear(getattr(layer, name)))

    def disable_adapter(self):
        model = self

        class _Ctx:
            def __enter__(self_):
                for m in model.modules():
                    if isinstance(m, LoraLinear):
                        m.disabled = True

            def __exit__(self_, *a):
                for m in model.modules():
                    if isinstance(m, LoraLinear):
                        m.disabled = False
        return _Ctx()

    def enable_input_require_grads(self):
        self.base_model.enable_input_require_grads()

    def forward(self, input_ids):
        return self.base_model(input_ids)


def get_peft_model(model, target_modules):
    return PeftModel(model, target_modules)


# ---------------------------------------------------------------- trainer (stand-in for GRPOTrainer 0.15)
class GRPOConfig(object):
    def __init__(self, learning_rate=5e-6, num_generations=4, max_completion_length=6,
                 gradient_checkpointing=True, beta=0.04, max_steps=2):
        self.learning_rate = learning_rate
        self.num_generations = num_generations
        self.max_completion_length = max_completion_length
        self.gradient_checkpointing = gradient_checkpointing
        self.beta = beta
        self.max_steps = max_steps


class GRPOTrainer(object):
    def __init__(self, model, reward_funcs, args, train_dataset, lora_target_modules):
        model = get_peft_model(model, lora_target_modules)
        if args.gradient_checkpointing:
            model.base_model.gradient_checkpointing_enable()
        self.model = model
        self.reward_funcs = reward_funcs
        self.args = args
        self.train_dataset = train_dataset
        self.optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad],
                                           lr=args.learning_rate, betas=(0.9, 0.99), weight_decay=0.01)

    @torch.no_grad()
    def _generate(self, prompt_ids):
        ids = prompt_ids.repeat_interleave(self.args.num_generations, dim=0)
        for _ in range(self.args.max_completion_length):
            logits = self.model(ids)[:, -1, :]
            next_tok = torch.multinomial(F.softmax(logits, dim=-1), 1)
            ids = torch.cat([ids, next_tok], dim=1)
        return ids

    def _get_per_token_logps(self, model, input_ids, logits_to_keep):
        logits = model(input_ids)[:, :-1, :]
        logits = logits[:, -logits_to_keep:]
        targets = input_ids[:, -logits_to_keep:]
        return torch.gather(logits.log_softmax(-1), 2, targets.unsqueeze(-1)).squeeze(-1)

    def compute_loss(self, prompt_ids):
        G, L = self.args.num_generations, self.args.max_completion_length
        self.model.eval()
        prompt_completion_ids = self._generate(prompt_ids)
        self.model.train()
        rewards = torch.stack([f(prompt_completion_ids[:, -L:]) for f in self.reward_funcs], 1).sum(1)
        mean_grouped = rewards.view(-1, G).mean(1).repeat_interleave(G)
        std_grouped = rewards.view(-1, G).std(1).repeat_interleave(G)
        advantages = (rewards - mean_grouped) / (std_grouped + 1e-4)

        per_token_logps = self._get_per_token_logps(self.model, prompt_completion_ids, L)
        with torch.no_grad(), self.model.disable_adapter():
            ref_per_token_logps = self._get_per_token_logps(self.model, prompt_completion_ids, L)
        per_token_kl = torch.exp(ref_per_token_logps - per_token_logps) - (ref_per_token_logps - per_token_logps) - 1
        per_token_loss = torch.exp(per_token_logps - per_token_logps.detach()) * advantages.unsqueeze(1)
        per_token_loss = -(per_token_loss - self.args.beta * per_token_kl)
        return per_token_loss.mean()

    def training_step(self, prompt_ids):
        loss = self.compute_loss(prompt_ids)
        loss.backward()  # expect: GG104
        return loss.detach()

    def train(self):
        for step in range(self.args.max_steps):
            prompt_ids = self.train_dataset[step % len(self.train_dataset)]
            self.optimizer.zero_grad()
            loss = self.training_step(prompt_ids)
            torch.nn.utils.clip_grad_norm_([p for p in self.model.parameters() if p.requires_grad], 0.1)
            self.optimizer.step()
            print('step', step, 'loss', loss.item())


def reward_len(completions):
    return (completions < 25).float().mean(dim=1)


train_dataset = [torch.randint(0, VOCAB, (2, 5)) for _ in range(2)]
training_args = GRPOConfig(gradient_checkpointing=True)
trainer = GRPOTrainer(model=CausalLM(), reward_funcs=[reward_len], args=training_args,
                      train_dataset=train_dataset,
                      lora_target_modules=["q_proj", "up_proj", "down_proj"])
trainer.train()
