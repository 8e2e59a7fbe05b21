# Source: https://github.com/LiyuanLucasLiu/LD-Net/issues/6
"""LD-Net's word-level language model as the repository has it: BasicUnit stores
`repackage_hidden(new_hidden)`, which detaches the carried LSTM state (the author's answer in
the thread), so each batch's backward stops at the state it received. `repackage_hidden` is
written with `h.detach()` (the repository's `Variable(h.data)` test on `type(h) == Variable` no
longer matches tensors). Adaptive softmax, loaders and torch_scope are small stand-ins.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim


# ---- model_word_ada/utils.py ----
def repackage_hidden(h):
    if isinstance(h, torch.Tensor):
        return h.detach()
    else:
        return tuple(repackage_hidden(v) for v in h)


def to_scalar(var):
    return var.view(-1).data.tolist()[0]


def init_embedding(input_embedding):
    bias = math.sqrt(3.0 / input_embedding.size(1))
    nn.init.uniform_(input_embedding, -bias, bias)


def init_lstm(input_lstm):
    for ind in range(0, input_lstm.num_layers):
        weight = getattr(input_lstm, 'weight_ih_l' + str(ind))
        bias = math.sqrt(6.0 / (weight.size(0) / 4 + weight.size(1)))
        nn.init.uniform_(weight, -bias, bias)
        weight = getattr(input_lstm, 'weight_hh_l' + str(ind))
        bias = math.sqrt(6.0 / (weight.size(0) / 4 + weight.size(1)))
        nn.init.uniform_(weight, -bias, bias)


# ---- model_word_ada/basic.py ----
class BasicUnit(nn.Module):
    def __init__(self, unit, input_dim, hid_dim, droprate):
        super(BasicUnit, self).__init__()
        rnnunit_map = {'rnn': nn.RNN, 'lstm': nn.LSTM, 'gru': nn.GRU}
        self.layer = rnnunit_map[unit](input_dim, hid_dim, 1)
        self.droprate = droprate
        self.output_dim = hid_dim
        self.init_hidden()

    def init_hidden(self):
        self.hidden_state = None

    def rand_ini(self):
        init_lstm(self.layer)

    def forward(self, x):
        out, new_hidden = self.layer(x, self.hidden_state)
        self.hidden_state = repackage_hidden(new_hidden)
        if self.droprate > 0:
            out = F.dropout(out, p=self.droprate, training=self.training)
        return out


class BasicRNN(nn.Module):
    def __init__(self, layer_num, unit, emb_dim, hid_dim, droprate):
        super(BasicRNN, self).__init__()
        layer_list = [BasicUnit(unit, emb_dim, hid_dim, droprate)] + \
            [BasicUnit(unit, hid_dim, hid_dim, droprate) for i in range(layer_num - 1)]
        self.layer = nn.Sequential(*layer_list)
        self.output_dim = layer_list[-1].output_dim
        self.init_hidden()

    def init_hidden(self):
        for tup in self.layer.children():
            tup.init_hidden()

    def rand_ini(self):
        for tup in self.layer.children():
            tup.rand_ini()

    def forward(self, x):
        return self.layer(x)


# ---- model_word_ada/adaptive.py stand-in (a full softmax) ----
class AdaptiveSoftmax(nn.Module):
    def __init__(self, input_size, cutoff):
        super().__init__()
        self.out = nn.Linear(input_size, cutoff[-1])

    def rand_ini(self):
        nn.init.xavier_uniform_(self.out.weight)

    def forward(self, w_in, target):
        return F.cross_entropy(self.out(w_in), target)


# ---- model_word_ada/LM.py ----
class LM(nn.Module):
    def __init__(self, rnn, soft_max, w_num, w_dim, droprate):
        super(LM, self).__init__()
        self.rnn = rnn
        self.soft_max = soft_max
        self.w_num = w_num
        self.w_dim = w_dim
        self.word_embed = nn.Embedding(w_num, w_dim)
        self.rnn_output = self.rnn.output_dim
        self.drop = nn.Dropout(p=droprate)

    def rand_ini(self):
        self.rnn.rand_ini()
        self.soft_max.rand_ini()
        init_embedding(self.word_embed.weight)

    def init_hidden(self):
        self.rnn.init_hidden()

    def forward(self, w_in, target):
        w_emb = self.word_embed(w_in)
        w_emb = self.drop(w_emb)
        out = self.rnn(w_emb).contiguous().view(-1, self.rnn_output)
        return self.soft_max(out, target)


# ---- model_word_ada/dataset.py LargeDataset stand-in: a token stream cut in windows ----
class LargeDataset(object):
    def __init__(self, n_words, batch_size, sequence_length, n_batches=3):
        self.stream = torch.randint(0, n_words, (sequence_length * n_batches + 1, batch_size))
        self.sequence_length = sequence_length
        self.n_batches = n_batches
        self.cur_idx = 0

    def get_tqdm(self, device):
        for self.cur_idx in range(1, self.n_batches + 1):
            start = (self.cur_idx - 1) * self.sequence_length
            word_t = self.stream[start:start + self.sequence_length].to(device)
            label_t = self.stream[start + 1:start + 1 + self.sequence_length].to(device)
            yield word_t, label_t


if __name__ == "__main__":
    args = dict(batch_size=4, sequence_length=5, hid_dim=16, word_dim=8, layer_num=2,
                droprate=0.1, epoch=1, clip=5, rnn_unit='lstm', n_words=50, interval=1)
    device = torch.device("cpu")
    train_loader = LargeDataset(args['n_words'], args['batch_size'], args['sequence_length'])
    rnn_layer = BasicRNN(args['layer_num'], args['rnn_unit'], args['word_dim'], args['hid_dim'],
                         args['droprate'])
    soft_max = AdaptiveSoftmax(rnn_layer.output_dim, [args['n_words']])
    lm_model = LM(rnn_layer, soft_max, args['n_words'], args['word_dim'], args['droprate'])
    lm_model.rand_ini()
    optimizer = optim.Adam(lm_model.parameters())
    lm_model.to(device)

    batch_index = 0
    for indexs in range(args['epoch']):
        lm_model.train()
        for word_t, label_t in train_loader.get_tqdm(device):
            if 1 == train_loader.cur_idx:
                lm_model.init_hidden()
            label_t = label_t.reshape(-1)
            lm_model.zero_grad()
            loss = lm_model(word_t, label_t)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(lm_model.parameters(), args['clip'])
            optimizer.step()
            batch_index += 1
            if 0 == batch_index % args['interval']:
                print('batch', batch_index, 'loss', to_scalar(loss))
