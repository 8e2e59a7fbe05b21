# Source: https://github.com/facebookresearch/fairseq/issues/251
"""Changing the encoder output at decode time in a fairseq LSTM translation model (fairseq 0.5,
models/lstm.py): inside LSTMDecoder.forward's time-step loop the reporter rewrites one feature of
the encoder states per step, `encoder_out[0][:,:,j] = do_something(encoder_out[0][:,:,j])`. The
attention of the earlier steps saved those encoder states (`source_hids * input` in AttentionLayer)
for its backward, and the slice assignment overwrites them in place, so loss.backward() fails
("one of the variables needed for gradient computation has been modified by an inplace
operation"; huihuifan: copy the variable and modify the copy, encoder_out takes part in the
gradient). The encoder, decoder and attention follow fairseq's LSTM model with small sizes (one
layer, no input feeding options, no incremental state); do_something is a learned per-feature
gate; random token batches stand in for the data."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class LSTMEncoder(nn.Module):
    def __init__(self, num_embeddings, embed_dim=16, hidden_size=16, dropout_out=0.1, padding_idx=0):
        super().__init__()
        self.dropout_out = dropout_out
        self.embed_tokens = nn.Embedding(num_embeddings, embed_dim, padding_idx=padding_idx)
        self.lstm = nn.LSTM(input_size=embed_dim, hidden_size=hidden_size)
        self.output_units = hidden_size

    def forward(self, src_tokens, src_lengths):
        bsz, seqlen = src_tokens.size()
        x = self.embed_tokens(src_tokens)
        x = x.transpose(0, 1)  # B x T x C -> T x B x C
        x, (final_hiddens, final_cells) = self.lstm(x)
        x = F.dropout(x, p=self.dropout_out, training=self.training)
        encoder_padding_mask = src_tokens.eq(0).t()
        return {
            'encoder_out': (x, final_hiddens, final_cells),
            'encoder_padding_mask': encoder_padding_mask if encoder_padding_mask.any() else None,
        }


class AttentionLayer(nn.Module):
    def __init__(self, input_embed_dim, output_embed_dim):
        super().__init__()
        self.input_proj = nn.Linear(input_embed_dim, output_embed_dim, bias=False)
        self.output_proj = nn.Linear(input_embed_dim + output_embed_dim, output_embed_dim, bias=False)

    def forward(self, input, source_hids, encoder_padding_mask):
        # input: bsz x input_embed_dim
        # source_hids: srclen x bsz x output_embed_dim
        x = self.input_proj(input)
        # compute attention
        attn_scores = (source_hids * x.unsqueeze(0)).sum(dim=2)
        # don't attend over padding
        if encoder_padding_mask is not None:
            attn_scores = attn_scores.float().masked_fill_(encoder_padding_mask, float('-inf'))
        attn_scores = F.softmax(attn_scores, dim=0)  # srclen x bsz
        # sum weighted sources
        x = (attn_scores.unsqueeze(2) * source_hids).sum(dim=0)
        x = torch.tanh(self.output_proj(torch.cat((x, input), dim=1)))
        return x, attn_scores


class LSTMDecoder(nn.Module):
    def __init__(self, num_embeddings, embed_dim=16, hidden_size=16, out_embed_dim=16, encoder_output_units=16):
        super().__init__()
        self.hidden_size = hidden_size
        self.embed_tokens = nn.Embedding(num_embeddings, embed_dim, padding_idx=0)
        self.layer = nn.LSTMCell(input_size=hidden_size + embed_dim, hidden_size=hidden_size)
        self.attention = AttentionLayer(hidden_size, encoder_output_units)
        self.fc_out = nn.Linear(out_embed_dim, num_embeddings)
        self.gate = nn.Parameter(torch.ones(encoder_output_units))

    def do_something(self, feature, j):
        return feature * torch.sigmoid(self.gate[j])

    def forward(self, prev_output_tokens, encoder_out_dict):
        encoder_out = encoder_out_dict['encoder_out']
        encoder_padding_mask = encoder_out_dict['encoder_padding_mask']
        bsz, seqlen = prev_output_tokens.size()

        # get outputs from encoder
        encoder_outs, _, _ = encoder_out[:3]

        # embed tokens
        x = self.embed_tokens(prev_output_tokens)
        x = x.transpose(0, 1)  # B x T x C -> T x B x C

        # initialize previous states
        prev_hidden = x.new_zeros(bsz, self.hidden_size)
        prev_cell = x.new_zeros(bsz, self.hidden_size)
        input_feed = x.new_zeros(bsz, self.hidden_size)

        outs = []
        for j in range(seqlen):
            # the reporter's change of the encoder output at decode time
            encoder_out[0][:, :, j] = self.do_something(encoder_out[0][:, :, j], j)

            # input feeding: concatenate context vector from previous time step
            input = torch.cat((x[j, :, :], input_feed), dim=1)
            hidden, cell = self.layer(input, (prev_hidden, prev_cell))

            # apply attention using the last layer's hidden state
            out, attn_scores = self.attention(hidden, encoder_outs, encoder_padding_mask)

            # input feeding
            input_feed = out
            prev_hidden, prev_cell = hidden, cell

            # save final output
            outs.append(out)

        # collect outputs across time steps
        x = torch.stack(outs, dim=1)  # B x T x C
        return self.fc_out(x)


class LSTMModel(nn.Module):
    def __init__(self, encoder, decoder):
        super().__init__()
        self.encoder = encoder
        self.decoder = decoder

    def forward(self, src_tokens, src_lengths, prev_output_tokens):
        encoder_out = self.encoder(src_tokens, src_lengths)
        return self.decoder(prev_output_tokens, encoder_out)


vocab = 30
model = LSTMModel(LSTMEncoder(vocab), LSTMDecoder(vocab))
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
model.train()
for step in range(2):
    src_tokens = torch.randint(1, vocab, (3, 7))
    target = torch.randint(1, vocab, (3, 6))
    prev_output_tokens = torch.cat([torch.full((3, 1), 2), target[:, :-1]], dim=1)
    net_output = model(src_tokens, torch.full((3,), 7), prev_output_tokens)
    loss = F.cross_entropy(net_output.reshape(-1, vocab), target.reshape(-1), reduction='sum')
    optimizer.zero_grad()
    loss.backward()  # expect: GG103
    optimizer.step()
