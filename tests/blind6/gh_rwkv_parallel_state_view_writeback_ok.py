# Source: https://github.com/yuunnn-w/RWKV_Pytorch/pull/11
"""RWKV_Pytorch's RWKV-6 model in its parallel mode with the PR's fix: the recurrence multiplies by
`s.clone()`, so what the product saves is a copy, not the view of the state buffer that the final
`state[:, ...] = s.view(...)` overwrites (L > 1, so the last step also multiplies a copy's result).
Same reduced RWKV_Block/RWKV_RNN, next-token cross entropy on random tokens."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class RWKV_Block(nn.Module):
    def __init__(self, n_embd, n_head, i):
        super().__init__()
        self.n_embd, self.n_head, self.head_size, self.i = n_embd, n_head, n_embd // n_head, i
        self.ln1 = nn.LayerNorm(n_embd)
        self.ln2 = nn.LayerNorm(n_embd)
        self.att_time_maa_w = nn.Parameter(torch.rand(n_embd))
        self.att_time_maa_k = nn.Parameter(torch.rand(n_embd))
        self.att_time_maa_v = nn.Parameter(torch.rand(n_embd))
        self.att_time_maa_r = nn.Parameter(torch.rand(n_embd))
        self.att_time_maa_g = nn.Parameter(torch.rand(n_embd))
        self.att_time_decay = nn.Parameter(torch.randn(n_embd) * 0.1)
        self.att_time_faaaa = nn.Parameter(torch.rand(n_head, self.head_size, 1))
        self.att_receptance = nn.Linear(n_embd, n_embd, bias=False)
        self.att_key = nn.Linear(n_embd, n_embd, bias=False)
        self.att_value = nn.Linear(n_embd, n_embd, bias=False)
        self.att_gate = nn.Linear(n_embd, n_embd, bias=False)
        self.att_output = nn.Linear(n_embd, n_embd, bias=False)
        self.att_group_norm = nn.GroupNorm(n_head, n_embd)
        self.ffn_time_maa_k = nn.Parameter(torch.rand(n_embd))
        self.ffn_time_maa_r = nn.Parameter(torch.rand(n_embd))
        self.ffn_key = nn.Linear(n_embd, 2 * n_embd, bias=False)
        self.ffn_receptance = nn.Linear(n_embd, n_embd, bias=False)
        self.ffn_value = nn.Linear(2 * n_embd, n_embd, bias=False)
        self.silu = nn.SiLU()

    def channel_mixing_parallel(self, x, state, i):
        i0 = (2 + self.head_size) * i + 0
        sx_lerp = torch.empty(x.shape, device=x.device)
        sx_lerp[:, 0] = state[:, i0] - x[:, 0]
        for l in range(1, x.size(1)):
            sx_lerp[:, l] = x[:, l - 1] - x[:, l]
        state[:, i0] = x[:, -1]
        xk = x + sx_lerp * self.ffn_time_maa_k
        xr = x + sx_lerp * self.ffn_time_maa_r
        r = torch.sigmoid(self.ffn_receptance(xr))
        k = torch.relu(self.ffn_key(xk)).pow(2)
        return r * self.ffn_value(k)

    def time_mixing_parallel(self, x, state, i):
        batch_size, L, H, S = x.size(0), x.size(1), self.n_head, self.head_size
        i1 = (2 + S) * i + 1
        sx_lerp = torch.empty(x.shape, device=x.device)
        sx_lerp[:, 0] = state[:, i1] - x[:, 0]
        for l in range(1, L):
            sx_lerp[:, l] = x[:, l - 1] - x[:, l]
        state[:, i1] = x[:, -1]

        xw = x + sx_lerp * self.att_time_maa_w
        xk = x + sx_lerp * self.att_time_maa_k
        xv = x + sx_lerp * self.att_time_maa_v
        xr = x + sx_lerp * self.att_time_maa_r
        xg = x + sx_lerp * self.att_time_maa_g
        w = self.att_time_decay + torch.tanh(xw)
        w = torch.exp(-torch.exp(w.view(batch_size, L, H, S, 1)))
        r = self.att_receptance(xr).view(batch_size, L, H, 1, S)
        k = self.att_key(xk).view(batch_size, L, H, S, 1)
        v = self.att_value(xv).view(batch_size, L, H, 1, S)
        g = self.silu(self.att_gate(xg))

        state_s = torch.empty(batch_size, L, H, S, S, device=x.device)
        s = state[:, (2 + S) * i + 2:(2 + S) * (i + 1)].view(batch_size, H, S, S)
        state_s[:, 0] = s
        a = k @ v

        for l in range(L - 1):
            s = a[:, l] + w[:, l] * s.clone()
            state_s[:, l + 1] = s

        s = a[:, -1] + w[:, -1] * s
        state[:, (2 + S) * i + 2:(2 + S) * (i + 1)] = s.view(batch_size, S, -1)

        x = r @ (self.att_time_faaaa * a + state_s)
        x = self.att_group_norm(x.flatten(start_dim=2).view(batch_size * L, -1)).view(batch_size, L, -1) * g
        return self.att_output(x)

    def forward_parallel(self, x, state):
        x = x + self.time_mixing_parallel(self.ln1(x), state, self.i)
        x = x + self.channel_mixing_parallel(self.ln2(x), state, self.i)
        return x


class RWKV_RNN(nn.Module):
    def __init__(self, vocab_size=20, n_embd=8, n_head=2, n_layer=2):
        super().__init__()
        self.n_embd, self.n_head, self.n_layer = n_embd, n_head, n_layer
        self.head_size = n_embd // n_head
        self.emb = nn.Embedding(vocab_size, n_embd)
        self.ln0 = nn.LayerNorm(n_embd)
        self.blocks = nn.ModuleList([RWKV_Block(n_embd, n_head, i) for i in range(n_layer)])
        self.ln_out = nn.LayerNorm(n_embd)
        self.head = nn.Linear(n_embd, vocab_size, bias=False)

    def init_state(self, batch_size):
        return torch.zeros(batch_size, self.n_layer * (2 + self.head_size), self.n_embd)

    def forward_parallel(self, token, state):
        x = self.ln0(self.emb(token))
        for block in self.blocks:
            x = block.forward_parallel(x, state)
        return self.head(self.ln_out(x)), state


model = RWKV_RNN()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(2):
    tokens = torch.randint(0, 20, (2, 7))
    state = model.init_state(batch_size=2)
    logits, state = model.forward_parallel(tokens[:, :-1], state)
    loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), tokens[:, 1:].reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(step, loss.item())
