# Source: https://github.com/huggingface/transformers/issues/21381
"""Fine-tuning a BERT encoder with gradient checkpointing and its first part frozen (the reporter:
freezing the embeddings and using gradient checkpointing disables all gradient calculation).
transformers 4.22's BertEncoder wraps each layer in torch.utils.checkpoint.checkpoint, the
reentrant variant: it runs the layer under no_grad and only records a backward when one of the
checkpoint's inputs requires grad. The frozen embeddings' output does not, so no layer's output
requires grad although the layers' weights do, and the sentence-embedding loss has no grad_fn:
loss.backward() fails ("element 0 of tensors does not require grad and does not have a grad_fn";
fix from the title: checkpoint with use_reentrant=False). A small BERT (embeddings, self-attention
layers, encoder with the checkpointing branch) stands in for BertModel; mean-pooled sentence
embeddings trained with a cosine-similarity loss on random sentence pairs stand in for the task."""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.checkpoint


class BertEmbeddings(nn.Module):
    def __init__(self, vocab_size, hidden_size, max_position_embeddings=64):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab_size, hidden_size, padding_idx=0)
        self.position_embeddings = nn.Embedding(max_position_embeddings, hidden_size)
        self.LayerNorm = nn.LayerNorm(hidden_size)
        self.dropout = nn.Dropout(0.1)

    def forward(self, input_ids):
        position_ids = torch.arange(input_ids.size(1)).unsqueeze(0)
        embeddings = self.word_embeddings(input_ids) + self.position_embeddings(position_ids)
        return self.dropout(self.LayerNorm(embeddings))


class BertLayer(nn.Module):
    def __init__(self, hidden_size, num_heads, intermediate_size):
        super().__init__()
        self.attention = nn.MultiheadAttention(hidden_size, num_heads, dropout=0.1, batch_first=True)
        self.attention_norm = nn.LayerNorm(hidden_size)
        self.intermediate = nn.Linear(hidden_size, intermediate_size)
        self.output = nn.Linear(intermediate_size, hidden_size)
        self.output_norm = nn.LayerNorm(hidden_size)

    def forward(self, hidden_states, key_padding_mask):
        attn, _ = self.attention(hidden_states, hidden_states, hidden_states, key_padding_mask=key_padding_mask)
        hidden_states = self.attention_norm(hidden_states + attn)
        ffn = self.output(F.gelu(self.intermediate(hidden_states)))
        return self.output_norm(hidden_states + ffn)


class BertEncoder(nn.Module):
    def __init__(self, num_layers, hidden_size, num_heads, intermediate_size):
        super().__init__()
        self.layer = nn.ModuleList([BertLayer(hidden_size, num_heads, intermediate_size)
                                    for _ in range(num_layers)])
        self.gradient_checkpointing = False

    def forward(self, hidden_states, key_padding_mask):
        for i, layer_module in enumerate(self.layer):
            if self.gradient_checkpointing and self.training:

                def create_custom_forward(module):
                    def custom_forward(*inputs):
                        return module(*inputs)

                    return custom_forward

                hidden_states = torch.utils.checkpoint.checkpoint(
                    create_custom_forward(layer_module), hidden_states, key_padding_mask, use_reentrant=True)
            else:
                hidden_states = layer_module(hidden_states, key_padding_mask)
        return hidden_states


class BertModel(nn.Module):
    def __init__(self, vocab_size=100, hidden_size=32, num_layers=2, num_heads=4, intermediate_size=64):
        super().__init__()
        self.embeddings = BertEmbeddings(vocab_size, hidden_size)
        self.encoder = BertEncoder(num_layers, hidden_size, num_heads, intermediate_size)

    def gradient_checkpointing_enable(self):
        self.encoder.gradient_checkpointing = True

    def forward(self, input_ids, attention_mask):
        embedding_output = self.embeddings(input_ids)
        return self.encoder(embedding_output, key_padding_mask=attention_mask == 0)


def mean_pooling(last_hidden_state, attention_mask):
    mask = attention_mask.unsqueeze(-1).float()
    return (last_hidden_state * mask).sum(1) / mask.sum(1).clamp(min=1e-9)


model = BertModel()
for param in model.embeddings.parameters():
    param.requires_grad = False
model.gradient_checkpointing_enable()
optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=2e-5)

model.train()
for step in range(2):
    ids_a, ids_b = torch.randint(1, 100, (4, 12)), torch.randint(1, 100, (4, 12))
    mask = torch.ones(4, 12, dtype=torch.long)
    labels = torch.rand(4)  # similarity scores of the sentence pairs
    emb_a = mean_pooling(model(ids_a, mask), mask)
    emb_b = mean_pooling(model(ids_b, mask), mask)
    loss = F.mse_loss(F.cosine_similarity(emb_a, emb_b), labels)
    optimizer.zero_grad()
    loss.backward()  # expect: GG104
    optimizer.step()
