# Source: https://github.com/jlamprou/Infini-Attention/issues/3
"""Training an Infini-Attention language model with the repository's segment loop (run_clm.py:
the long sequence is cut into segments, each segment's loss is backwarded at once and the
optimizer steps after the last one), with the compressive memory M and its normaliser z passed
from segment to segment. In the reporter's adaptation _update_memory returns `M + ...` and
`z + ...` still attached to the previous segment's graph, so the second segment's backward walks
into the first segment's freed graph ("Trying to backward through the graph a second time";
the author: M and z are detached in _update_memory, there is no need to keep them for the
backward). InfiniAttention is the repository's (infiniAttention.py: memory retrieval, memory
update, long-term injection with a learned beta) without the rotary embedding and KV cache; one
attention layer between an embedding and an LM head stands in for Qwen, random tokens for the
corpus."""
from typing import Optional, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F


class InfiniAttention(nn.Module):
    def __init__(self, hidden_size=32, num_heads=4, attention_dropout=0.0):
        super().__init__()
        self.hidden_size = hidden_size
        self.num_heads = num_heads
        self.head_dim = self.hidden_size // self.num_heads
        self.attention_dropout = attention_dropout
        self.q_proj = nn.Linear(self.hidden_size, self.num_heads * self.head_dim, bias=True)
        self.k_proj = nn.Linear(self.hidden_size, self.num_heads * self.head_dim, bias=True)
        self.v_proj = nn.Linear(self.hidden_size, self.num_heads * self.head_dim, bias=True)
        self.o_proj = nn.Linear(self.num_heads * self.head_dim, self.hidden_size, bias=False)
        self.beta = nn.Parameter(torch.randn(1))

    def forward(self, hidden_states: torch.Tensor,
                M_Z: Optional[Tuple[torch.Tensor, torch.Tensor]] = None):
        # Initialize memory and normalization term
        if M_Z is None:
            M = torch.zeros(self.num_heads, self.head_dim, self.head_dim).to(hidden_states.device)
            z = torch.zeros(self.num_heads, self.head_dim).to(hidden_states.device)
        else:
            M, z = M_Z

        bsz, q_len, _ = hidden_states.size()
        query_states = self.q_proj(hidden_states).view(bsz, q_len, self.num_heads, self.head_dim).transpose(1, 2)
        key_states = self.k_proj(hidden_states).view(bsz, q_len, self.num_heads, self.head_dim).transpose(1, 2)
        value_states = self.v_proj(hidden_states).view(bsz, q_len, self.num_heads, self.head_dim).transpose(1, 2)

        # Memory retrieval and attention calculation per segment
        memory_output = self._retrieve_from_memory(query_states, M, z)
        # Update memory with current segment's key and value states
        M, z = self._update_memory(key_states, value_states, M, z)

        attn_output = F.scaled_dot_product_attention(
            query_states, key_states, value_states, is_causal=True,
            dropout_p=self.attention_dropout if self.training else 0.0)
        combined_output = self._long_term_injection(attn_output, memory_output)

        combined_output = combined_output.transpose(1, 2).contiguous()
        combined_output = combined_output.view(bsz, q_len, self.hidden_size)
        final_output = self.o_proj(combined_output)
        return final_output, (M, z)

    def _retrieve_from_memory(self, Q, M, z):
        # Retrieve context from compressive memory using linear attention (Eq. 3)
        M_s_1 = torch.matmul(F.elu(Q) + 1, M)
        Z_s_1 = torch.matmul(F.elu(Q) + 1, z.unsqueeze(-1)) + 1e-8
        return M_s_1 / Z_s_1

    def _update_memory(self, K, V, M, z):
        updated_M = M + torch.matmul(F.elu(K).transpose(-2, -1) + 1, V).mean(0)  # expect: GG202
        updated_z = z + (F.elu(K) + 1).sum(dim=-2).mean(0)  # expect: GG202
        return updated_M, updated_z

    def _long_term_injection(self, A_dot, A_mem):
        beta = torch.sigmoid(self.beta)
        return beta * A_mem + (1 - beta) * A_dot


class InfiniLM(nn.Module):
    def __init__(self, vocab_size=64, hidden_size=32):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab_size, hidden_size)
        self.attn = InfiniAttention(hidden_size)
        self.norm = nn.LayerNorm(hidden_size)
        self.lm_head = nn.Linear(hidden_size, vocab_size, bias=False)

    def forward(self, input_ids, M_Z=None):
        h = self.embed_tokens(input_ids)
        attn_out, M_Z = self.attn(h, M_Z=M_Z)
        logits = self.lm_head(self.norm(h + attn_out))
        return logits, M_Z


model = InfiniLM()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
segment_size = 8
for step in range(2):
    input_ids = torch.randint(0, 64, (2, 33))
    labels = input_ids[:, 1:]
    input_ids = input_ids[:, :-1]
    optimizer.zero_grad()
    M_Z = None
    total_loss = 0.0
    for start in range(0, input_ids.size(1), segment_size):
        segment = input_ids[:, start:start + segment_size]
        segment_labels = labels[:, start:start + segment_size]
        logits, M_Z = model(segment, M_Z=M_Z)
        loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), segment_labels.reshape(-1))
        loss.backward()  # expect: GG101
        total_loss += loss.item()
    optimizer.step()
    print(step, total_loss)
