# Source: https://github.com/OpenNMT/OpenNMT-py/issues/403
"""OpenNMT-py's truncated BPTT with the decoder state detached as pltrdy proposes in the thread:
DecoderState.detach rebinds the state's own attributes, `self.hidden = tuple(h.detach() for h in
self.hidden)` and `self.input_feed = self.input_feed.detach()`, so each chunk's backward stops at
the state handed over by the previous chunk (retain_graph=True, the "tempting" fix, would keep
every chunk's graph alive and backward through it again)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class RNNEncoder(nn.Module):
    def __init__(self, vocab_size, emb_size, hidden_size):
        super(RNNEncoder, self).__init__()
        self.embeddings = nn.Embedding(vocab_size, emb_size)
        self.rnn = nn.LSTM(emb_size, hidden_size)

    def forward(self, src):
        emb = self.embeddings(src)
        memory_bank, encoder_final = self.rnn(emb)
        return encoder_final, memory_bank


class GlobalAttention(nn.Module):
    def __init__(self, dim):
        super(GlobalAttention, self).__init__()
        self.linear_in = nn.Linear(dim, dim, bias=False)
        self.linear_out = nn.Linear(dim * 2, dim, bias=False)

    def forward(self, source, memory_bank):
        # source: batch x dim, memory_bank: src_len x batch x dim
        h_t = self.linear_in(source).unsqueeze(2)
        align = torch.bmm(memory_bank.transpose(0, 1), h_t).squeeze(2)
        align_vectors = F.softmax(align, dim=1)
        c = torch.bmm(align_vectors.unsqueeze(1), memory_bank.transpose(0, 1)).squeeze(1)
        attn_h = torch.tanh(self.linear_out(torch.cat([c, source], 1)))
        return attn_h, align_vectors


class DecoderState(object):
    def detach(self):
        self.hidden = tuple(h.detach() for h in self.hidden)
        self.input_feed = self.input_feed.detach()


class RNNDecoderState(DecoderState):
    def __init__(self, hidden_size, rnnstate):
        self.hidden = rnnstate
        batch_size = self.hidden[0].size(0)
        self.input_feed = self.hidden[0].new_zeros(batch_size, hidden_size)

    @property
    def _all(self):
        return self.hidden + (self.input_feed,)

    def update_state(self, rnnstate, input_feed):
        self.hidden = rnnstate
        self.input_feed = input_feed


class InputFeedRNNDecoder(nn.Module):
    def __init__(self, vocab_size, emb_size, hidden_size):
        super(InputFeedRNNDecoder, self).__init__()
        self.hidden_size = hidden_size
        self.embeddings = nn.Embedding(vocab_size, emb_size)
        self.rnn = nn.LSTMCell(emb_size + hidden_size, hidden_size)
        self.attn = GlobalAttention(hidden_size)

    def init_decoder_state(self, encoder_final):
        return RNNDecoderState(self.hidden_size, tuple(h[-1] for h in encoder_final))

    def forward(self, tgt, memory_bank, state):
        input_feed = state.input_feed
        hidden = state.hidden
        outputs = []
        for emb_t in self.embeddings(tgt).split(1):
            decoder_input = torch.cat([emb_t.squeeze(0), input_feed], 1)
            hidden = self.rnn(decoder_input, hidden)
            decoder_output, _ = self.attn(hidden[0], memory_bank)
            input_feed = decoder_output
            outputs.append(decoder_output)
        state.update_state(hidden, input_feed)
        return torch.stack(outputs), state


class NMTModel(nn.Module):
    def __init__(self, encoder, decoder):
        super(NMTModel, self).__init__()
        self.encoder = encoder
        self.decoder = decoder

    def forward(self, src, tgt, dec_state=None):
        tgt = tgt[:-1]  # exclude last target from inputs
        enc_final, memory_bank = self.encoder(src)
        enc_state = self.decoder.init_decoder_state(enc_final)
        decoder_outputs, dec_state = self.decoder(
            tgt, memory_bank, enc_state if dec_state is None else dec_state)
        return decoder_outputs, dec_state


class Trainer(object):
    def __init__(self, model, generator, optim, trunc_size):
        self.model = model
        self.generator = generator
        self.optim = optim
        self.trunc_size = trunc_size
        self.criterion = nn.NLLLoss()

    def train(self, train_iter, epoch):
        for i, (src, tgt_outer) in enumerate(train_iter):
            target_size = tgt_outer.size(0)
            trunc_size = self.trunc_size if self.trunc_size else target_size
            dec_state = None
            self.model.zero_grad()
            for j in range(0, target_size - 1, trunc_size):
                tgt = tgt_outer[j: j + trunc_size + 1]
                outputs, dec_state = self.model(src, tgt, dec_state)
                scores = self.generator(outputs.view(-1, outputs.size(2)))
                loss = self.criterion(scores, tgt[1:].reshape(-1))
                loss.backward()
                self.optim.step()
                self.model.zero_grad()
                if dec_state is not None:
                    dec_state.detach()
            print(epoch, i, loss.item())


vocab_size, emb_size, hidden_size = 20, 8, 16
model = NMTModel(RNNEncoder(vocab_size, emb_size, hidden_size),
                 InputFeedRNNDecoder(vocab_size, emb_size, hidden_size))
model.generator = nn.Sequential(nn.Linear(hidden_size, vocab_size), nn.LogSoftmax(dim=-1))
optim = torch.optim.SGD(model.parameters(), lr=0.1)
train_iter = [(torch.randint(0, vocab_size, (7, 4)), torch.randint(0, vocab_size, (9, 4)))
              for _ in range(3)]
trainer = Trainer(model, model.generator, optim, trunc_size=4)
for epoch in range(2):
    trainer.train(train_iter, epoch)
