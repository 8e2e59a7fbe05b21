# Source: https://github.com/idiap/fast-transformers/pull/10
"""fast-transformers' recurrent linear attention with the PR's fix: the state is updated out of
place, `Zi = Zi + K` and `Si = Si + torch.einsum(...)`, so the tensors an earlier step's einsums
saved are never overwritten and the loss over all steps can be backwarded. (The maintainer merged
an equivalent: the out-of-place path whenever gradients are needed.) The attention, attention
layer and recurrent encoder layer are the library's (without its masking and builder machinery);
a next-token model over random sequences drives them one time step at a time."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def elu_feature_map(x):
    return F.elu(x) + 1


class RecurrentLinearAttention(nn.Module):
    """Implement fast_transformers.attention.causal_linear_attention as a fixed-dimensional state
    recurrent model."""
    def __init__(self, query_dimensions, feature_map=None, eps=1e-6):
        super(RecurrentLinearAttention, self).__init__()
        self.feature_map = feature_map or elu_feature_map
        self.eps = eps

    def forward(self, query, key, value, state=None):
        # Apply the feature map to the query and key
        Q = self.feature_map(query)
        K = self.feature_map(key)

        # Extract some shapes
        N, H, D = Q.shape
        _, _, M = value.shape

        # Extract the memory or initialize it
        if state is None:
            Si = query.new_zeros((N, H, D, M))
            Zi = query.new_zeros((N, H, D))
        else:
            Si, Zi = state

        # Ensure the batch size did not change
        if len(Si) != N:
            raise ValueError("The batch size changed during iteration")

        # Update the internal state
        Zi = Zi + K
        Si = Si + torch.einsum("nhd,nhm->nhdm", K, value)

        # Compute the output
        Z = 1. / (torch.einsum("nhd,nhd->nh", Q, Zi) + self.eps)
        V = torch.einsum("nhd,nhdm,nh->nhm", Q, Si, Z)

        return V, [Si, Zi]


class RecurrentAttentionLayer(nn.Module):
    def __init__(self, attention, d_model, n_heads, d_keys=None, d_values=None):
        super(RecurrentAttentionLayer, self).__init__()
        d_keys = d_keys or (d_model // n_heads)
        d_values = d_values or (d_model // n_heads)
        self.inner_attention = attention
        self.query_projection = nn.Linear(d_model, d_keys * n_heads)
        self.key_projection = nn.Linear(d_model, d_keys * n_heads)
        self.value_projection = nn.Linear(d_model, d_values * n_heads)
        self.out_projection = nn.Linear(d_values * n_heads, d_model)
        self.n_heads = n_heads

    def forward(self, query, key, value, state=None):
        N = query.shape[0]
        H = self.n_heads
        query = self.query_projection(query).view(N, H, -1)
        key = self.key_projection(key).view(N, H, -1)
        value = self.value_projection(value).view(N, H, -1)
        new_value, state = self.inner_attention(query, key, value, state)
        new_value = new_value.view(N, -1)
        return self.out_projection(new_value), state


class RecurrentTransformerEncoderLayer(nn.Module):
    def __init__(self, attention, d_model, d_ff=None, dropout=0.1, activation="relu"):
        super(RecurrentTransformerEncoderLayer, self).__init__()
        d_ff = d_ff or 4 * d_model
        self.attention = attention
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)
        self.activation = F.relu if activation == "relu" else F.gelu

    def forward(self, x, state=None):
        # Run the self attention and add it to the input
        x2, state = self.attention(x, x, x, state)
        x = x + self.dropout(x2)

        # Run the fully connected part of the layer
        y = x = self.norm1(x)
        y = self.dropout(self.activation(self.linear1(y)))
        y = self.dropout(self.linear2(y))

        return self.norm2(x + y), state


class RecurrentTransformerEncoder(nn.Module):
    def __init__(self, layers, norm_layer=None):
        super(RecurrentTransformerEncoder, self).__init__()
        self.layers = nn.ModuleList(layers)
        self.norm = norm_layer

    def forward(self, x, state=None):
        # Initialize the memory to None if not given
        if state is None:
            state = [None] * len(self.layers)

        # Apply all the transformers
        for i, layer in enumerate(self.layers):
            x, s = layer(x, state[i])
            state[i] = s

        # Apply the normalization if needed
        if self.norm is not None:
            x = self.norm(x)

        return x, state


class NextTokenModel(nn.Module):
    def __init__(self, vocab=20, d_model=32, n_heads=4, n_layers=2):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        self.encoder = RecurrentTransformerEncoder(
            [RecurrentTransformerEncoderLayer(
                RecurrentAttentionLayer(RecurrentLinearAttention(d_model // n_heads), d_model, n_heads),
                d_model, dropout=0.0) for _ in range(n_layers)],
            nn.LayerNorm(d_model))
        self.head = nn.Linear(d_model, vocab)

    def forward(self, tokens):
        state = None
        logits = []
        for t in range(tokens.shape[1]):
            out, state = self.encoder(self.embed(tokens[:, t]), state)
            logits.append(self.head(out))
        return torch.stack(logits, dim=1)


model = NextTokenModel()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(2):
    tokens = torch.randint(0, 20, (4, 8))
    logits = model(tokens[:, :-1])
    loss = F.cross_entropy(logits.reshape(-1, 20), tokens[:, 1:].reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
