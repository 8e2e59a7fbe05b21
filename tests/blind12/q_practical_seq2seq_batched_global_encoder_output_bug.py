# Source: https://github.com/spro/practical-pytorch/issues/27
"""A commenter on the batching thread of practical-pytorch's seq2seq tutorial posts his batched
translation script (vijendra-rana/Random, translation_with_batch.py): train() pads the encoder
outputs to MAX_LENGTH by copying `output_from_encoder[i]`, a global left by an earlier shape check of
the encoder, instead of the local `encoder_outputs`. The first backward frees that global's encoder
graph, so the second batch raises "Trying to backward through the graph a second time". Fix: copy
the encoder outputs of the current batch. (Sizes are tiny; `loss.data[0]` is `loss.item()`,
softmax gets `dim=1`, and the batch tuple is unpacked in the order batchify yields it.)
"""
from __future__ import unicode_literals, print_function, division
import random

import torch
import torch.nn as nn
from torch.autograd import Variable
from torch import optim
import torch.nn.functional as F

use_cuda = False


class EncoderRNN(nn.Module):
    '''Encoder class for seq2seq'''
    def __init__(self, input_size, batch_size, hidden_size, n_layers=1):
        super(EncoderRNN, self).__init__()
        self.n_layers = n_layers
        self.batch_size = batch_size
        self.hidden_size = hidden_size

        self.embedding = nn.Embedding(input_size, hidden_size)
        self.gru = nn.GRU(hidden_size, hidden_size)

    def forward(self, input, hidden):
        embedded = self.embedding(input).view(-1, self.batch_size, self.hidden_size)
        output = embedded
        for i in range(self.n_layers):
            output, hidden = self.gru(output, hidden)
        return output, hidden

    def initHidden(self):
        result = Variable(torch.zeros(self.n_layers, self.batch_size, self.hidden_size))
        if use_cuda:
            return result.cuda()
        else:
            return result


MAX_LENGTH = 10


class AttnDecoderRNN(nn.Module):
    def __init__(self, hidden_size, output_size, batch_size, n_layers=1, dropout_p=0.1, max_length=MAX_LENGTH):
        super(AttnDecoderRNN, self).__init__()
        self.hidden_size = hidden_size
        self.output_size = output_size
        self.n_layers = n_layers
        self.dropout_p = dropout_p
        self.max_length = max_length
        self.batch_size = batch_size

        self.embedding = nn.Embedding(self.output_size, self.hidden_size)
        self.attn = nn.Linear(self.hidden_size * 2, self.max_length)
        self.attn_combine = nn.Linear(self.hidden_size * 2, self.hidden_size)
        self.dropout = nn.Dropout(self.dropout_p)
        self.gru = nn.GRU(self.hidden_size, self.hidden_size)
        self.out = nn.Linear(self.hidden_size, self.output_size)

    def forward(self, input, hidden, encoder_outputs):
        embedded = self.embedding(input).view(1, batch_size, -1)
        embedded = self.dropout(embedded)

        attn_weights = F.softmax(
            self.attn(torch.cat((embedded[0], hidden[0]), 1)), dim=1)

        encoder_outputs = encoder_outputs.transpose(1, 0)
        attn_weights = attn_weights.unsqueeze(1)
        attn_applied = torch.bmm(attn_weights, encoder_outputs)
        attn_applied = attn_applied.transpose(0, 1)

        output = torch.cat((embedded[0], attn_applied[0]), 1)
        output = self.attn_combine(output).unsqueeze(0)

        for i in range(self.n_layers):
            output = F.relu(output)
            output, hidden = self.gru(output, hidden)

        output = F.log_softmax(self.out(output[0]), dim=1)
        return output, hidden, attn_weights

    def initHidden(self):
        result = Variable(torch.zeros(1, batch_size, self.hidden_size))
        if use_cuda:
            return result.cuda()
        else:
            return result


def fake_data(no_of_pairs, max_size_len=9, max_vocab=10):
    # 1 is saved for eos, 0 for pad, 2 for sos
    encoding_sentences, decoding_sentences = [], []
    for i in range(no_of_pairs):
        encoding_sentences.append([random.randint(3, max_vocab - 1) for num in range(random.randint(1, max_size_len))])
        decoding_sentences.append([random.randint(3, max_vocab - 1) for num in range(random.randint(1, max_size_len))])
    return encoding_sentences, decoding_sentences


def batchify(pairs_sorted, batch_size):
    num_batches = len(pairs_sorted) // batch_size
    while True:
        for i in range(num_batches):
            pairs_result = pairs_sorted[i:i + batch_size]
            encoding_sentences = [pair[0] for pair in pairs_result]
            max_encoding_length = len(encoding_sentences[-1])
            encoding_sentences = [sentence + [0] * (max_encoding_length - len(sentence)) + [1] for sentence in encoding_sentences]
            encoding_mask = [list(map(lambda a: 0 if a == 0 else 1, sentence)) for sentence in encoding_sentences]

            decoding_sentences = [pair[1] for pair in pairs_result]
            max_decoding_length = len(max(decoding_sentences, key=len))
            decoding_sentences = [sentence + [0] * (max_decoding_length - len(sentence)) + [1] for sentence in decoding_sentences]
            decoding_mask = [list(map(lambda a: 0 if a == 0 else 1, sentence)) for sentence in decoding_sentences]
            yield Variable(torch.LongTensor(encoding_sentences)), Variable(torch.LongTensor(decoding_sentences)), \
                Variable(torch.LongTensor(encoding_mask)), Variable(torch.LongTensor(decoding_mask))
        pairs_sorted = pairs_sorted[::-1]


teacher_forcing_ratio = 0.5


def train(encoder_sentences, decoder_sentences, decoder_mask, encoder, decoder, encoder_optimizer, decoder_optimizer, max_len=MAX_LENGTH):
    encoder_optimizer.zero_grad()
    decoder_optimizer.zero_grad()
    encoder_outputs, encoder_hidden = encoder(encoder_sentences, encoder.initHidden())

    # the encoder outputs passed to the decoder have to be (max_len, batch_size, hidden_size)
    encoder_outputs_for_decoder = Variable(torch.zeros(max_len, batch_size, hidden_size))
    encoder_outputs_for_decoder = encoder_outputs_for_decoder.cuda() if use_cuda else encoder_outputs_for_decoder

    for i in range(output_from_encoder.size(0)):
        encoder_outputs_for_decoder[i] = output_from_encoder[i]

    decoder_input = Variable(torch.LongTensor([2] * batch_size)).view(-1, 1)
    decoder_input = decoder_input.cuda() if use_cuda else decoder_input

    decoder_hidden = encoder_hidden

    use_teacher_forcing = True if random.random() < teacher_forcing_ratio else False

    decoding_len = decoder_sentences.size()[1]

    loss = 0
    use_teacher_forcing = True
    if use_teacher_forcing:
        for i in range(decoding_len):
            output_from_decoder, decoder_hidden, decoder_attention = decoder(decoder_input, decoder_hidden, encoder_outputs_for_decoder)
            tmp = decoder_sentences[:, i].contiguous().view(-1, 1)
            word_loss = output_from_decoder.gather(1, tmp) * decoder_mask[:, i].float().contiguous().view(-1, 1)

            loss += -1 * word_loss.sum()
            decoder_input = decoder_sentences[:, i].contiguous().view(-1, 1)
    else:
        for i in range(decoding_len):
            output_from_decoder, decoder_hidden, decoder_attention = decoder(decoder_input, decoder_hidden, encoder_outputs_for_decoder)
            top_val, top_idx = output_from_decoder.data.topk(1)
            word_loss = output_from_decoder.gather(1, Variable(top_idx)).view(-1, 1) * decoder_mask[:, i].float().contiguous().view(-1, 1)

            loss += -1 * word_loss.sum()
            decoder_input = top_idx

    loss.backward()  # expect: GG101

    encoder_optimizer.step()
    decoder_optimizer.step()

    return loss.item() / decoding_len


def train_iters(encoder, decoder, batch_generator, batch_size, num_iters, print_every=1000, plot_every=100, learning_rate=0.01):
    plot_losses = []
    print_loss_total = 0
    plot_loss_total = 0

    encoder_optimizer = optim.SGD(encoder.parameters(), lr=learning_rate)
    decoder_optimizer = optim.SGD(decoder.parameters(), lr=learning_rate)

    num_iters = 2 * num_iters // batch_size

    for iter in range(1, num_iters + 1):
        en_sen, dec_sen, en_mask, dec_mask = next(batch_generator)
        loss = train(en_sen, dec_sen, dec_mask, encoder, decoder, encoder_optimizer, decoder_optimizer)

        print_loss_total += loss
        plot_loss_total += loss

        if iter % print_every == 0:
            print_loss_avg = print_loss_total / print_every
            print_loss_total = 0
            print('(%d) %.4f' % (iter, print_loss_avg))

        if iter % plot_every == 0:
            plot_loss_avg = plot_loss_total / plot_every
            plot_losses.append(plot_loss_avg)
            plot_loss_total = 0


random.seed(0)
batch_size = 4
hidden_size = 8
n_layers = 1
input_size = 10
encoder = EncoderRNN(input_size, hidden_size=hidden_size, batch_size=batch_size)

output_size = 10
attn_decoder1 = AttnDecoderRNN(hidden_size, output_size, 1, dropout_p=0.1)

encoding_sentences, decoding_sentences = fake_data(16)
pairs_sorted = sorted(zip(encoding_sentences, decoding_sentences), key=lambda pair: len(pair[0]))

batch_gen = batchify(pairs_sorted, batch_size)

# checking the encoder's output shape on one batch (an earlier cell of the notebook)
en_sen, dec_sen, en_mask, dec_mask = next(batchify(pairs_sorted, batch_size))
output_from_encoder, hidden_from_encoder = encoder(en_sen, encoder.initHidden())
print(output_from_encoder.size())

train_iters(encoder, attn_decoder1, batch_gen, batch_size, 8, print_every=2)
