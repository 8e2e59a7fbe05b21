# Source: https://github.com/OpenBMB/MiniCPM-V/issues/730
"""MiniCPM-V's get_vllm_embedding under LoRA with gradient checkpointing, fixed by writing the image
features into a copy: `embed_tokens(...).clone()` is not a leaf, so scatter_ on its rows is
recorded and the LoRA weights get their gradients through it (the stored thread has no answer; the
copy keeps enable_input_require_grads working). Same stand-ins and random batches."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class LoRALinear(nn.Module):
    def __init__(self, base, r=4):
        super().__init__()
        self.base = base
        self.base.weight.requires_grad_(False)
        self.lora_A = nn.Linear(base.in_features, r, bias=False)
        self.lora_B = nn.Linear(r, base.out_features, bias=False)
        nn.init.zeros_(self.lora_B.weight)

    def forward(self, x):
        return self.base(x) + self.lora_B(self.lora_A(x))


class TinyLLMModel(nn.Module):
    def __init__(self, vocab_size=40, hidden=16):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab_size, hidden)
        self.embed_tokens.weight.requires_grad_(False)
        self.mlp = LoRALinear(nn.Linear(hidden, hidden, bias=False))
        self.norm = nn.LayerNorm(hidden)

    def forward(self, inputs_embeds):
        return self.norm(inputs_embeds + torch.tanh(self.mlp(inputs_embeds)))


class TinyLLM(nn.Module):
    def __init__(self, vocab_size=40, hidden=16):
        super().__init__()
        self.model = TinyLLMModel(vocab_size, hidden)
        self.lm_head = nn.Linear(hidden, vocab_size, bias=False)
        self.lm_head.weight.requires_grad_(False)

    def get_input_embeddings(self):
        return self.model.embed_tokens


class MiniCPMV(nn.Module):
    def __init__(self, vision_dim=12, hidden=16, query_num=2):
        super().__init__()
        self.llm = TinyLLM(hidden=hidden)
        self.resampler = nn.Linear(vision_dim, hidden)
        self.query_num = query_num

    def get_input_embeddings(self):
        return self.llm.get_input_embeddings()

    def enable_input_require_grads(self):
        def make_inputs_require_grads(module, input, output):
            output.requires_grad_(True)

        self._require_grads_hook = self.get_input_embeddings().register_forward_hook(make_inputs_require_grads)

    def get_vllm_embedding(self, data):
        vision_hidden_states = [self.resampler(pixel_values) for pixel_values in data['pixel_values']]
        vllm_embedding = self.llm.model.embed_tokens(data['input_ids']).clone()
        bs = len(data['input_ids'])
        for i in range(bs):
            cur_vs_hs = vision_hidden_states[i]
            if len(cur_vs_hs) > 0:
                cur_vllm_emb = vllm_embedding[i]
                cur_image_bound = data['image_bound'][i]
                if len(cur_image_bound) > 0:
                    image_indices = torch.stack(
                        [torch.arange(r[0], r[1], dtype=torch.long) for r in cur_image_bound]
                    )
                    cur_vllm_emb.scatter_(
                        0,
                        image_indices.view(-1, 1).repeat(1, cur_vllm_emb.shape[-1]),
                        cur_vs_hs.view(-1, cur_vs_hs.shape[-1]),
                    )
        return vllm_embedding, vision_hidden_states

    def forward(self, data):
        vllm_embedding, _ = self.get_vllm_embedding(data)
        hidden = self.llm.model(vllm_embedding)
        return self.llm.lm_head(hidden)


def make_batch(bs=2, seq_len=8, vision_dim=12, query_num=2):
    input_ids = torch.randint(0, 40, (bs, seq_len))
    pixel_values = [torch.randn(1, query_num, vision_dim) for _ in range(bs)]
    image_bound = [torch.tensor([[1, 1 + query_num]]) for _ in range(bs)]
    return {'input_ids': input_ids, 'pixel_values': pixel_values, 'image_bound': image_bound}


model = MiniCPMV()
model.enable_input_require_grads()
optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4)
for step in range(2):
    data = make_batch()
    logits = model(data)
    labels = data['input_ids'][:, 1:]
    loss = F.cross_entropy(logits[:, :-1].reshape(-1, logits.size(-1)), labels.reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(step, loss.item())
