# Source: https://github.com/hiyoung123/SoftMaskedBert/issues/16
"""Training Soft-Masked BERT (Chinese spelling correction): SoftMaskedBert.__init__ embeds the
[MASK] token once, self.mask_e = self.embedding(mask_token_id), so mask_e carries a graph through
BERT's embedding layer (its LayerNorm saved weight and bias). Every step backwards through that
same graph (the trainer calls loss.backward(retain_graph=True) to allow it) after
optim_schedule.step_and_update_lr() updated the embedding parameters in place: "[torch.FloatTensor
[768]] is at version 3; expected version 2" ("works on 1.4"). A small BertEmbeddings/encoder
written here stands in for transformers' BertModel, random token ids for the corpus, and the
trainer's tqdm/accuracy bookkeeping is left out."""
import numpy as np
import torch
import torch.nn as nn
from torch.optim import Adam


class BertEmbeddings(nn.Module):
    def __init__(self, vocab_size, hidden_size, max_position=64, type_vocab_size=2):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab_size, hidden_size)
        self.position_embeddings = nn.Embedding(max_position, hidden_size)
        self.token_type_embeddings = nn.Embedding(type_vocab_size, hidden_size)
        self.LayerNorm = nn.LayerNorm(hidden_size, eps=1e-12)
        self.dropout = nn.Dropout(0.1)

    def forward(self, input_ids, token_type_ids=None):
        seq_length = input_ids.size(1)
        position_ids = torch.arange(seq_length).unsqueeze(0).expand_as(input_ids)
        if token_type_ids is None:
            token_type_ids = torch.zeros_like(input_ids)
        embeddings = (self.word_embeddings(input_ids) + self.position_embeddings(position_ids)
                      + self.token_type_embeddings(token_type_ids))
        return self.dropout(self.LayerNorm(embeddings))


class BertModel(nn.Module):
    def __init__(self, vocab_size=50, hidden_size=16, heads=2, layers=2):
        super().__init__()
        self.config = {'hidden_size': hidden_size, 'vocab_size': vocab_size}
        self.embeddings = BertEmbeddings(vocab_size, hidden_size)
        self.encoder = nn.TransformerEncoder(
            nn.TransformerEncoderLayer(hidden_size, heads, 4 * hidden_size, batch_first=True), layers)


class BiGRU(nn.Module):
    """
    decotor 使用 BiGRU
    """
    def __init__(self, embedding_size, hidden, n_layers, dropout=0.0):
        super(BiGRU, self).__init__()
        self.rnn = nn.GRU(embedding_size, hidden, num_layers=n_layers,
                          bidirectional=True, dropout=dropout, batch_first=True)
        self.sigmoid = nn.Sigmoid()
        self.linear = nn.Linear(hidden*2, 1)

    def forward(self, x):
        out, _ = self.rnn(x)
        prob = self.sigmoid(self.linear(out))
        return prob


class SoftMaskedBert(nn.Module):
    def __init__(self, bert, mask_token_id, hidden, layer_n):
        super(SoftMaskedBert, self).__init__()
        self.embedding = bert.embeddings
        self.config = bert.config
        embedding_size = self.config['hidden_size']

        self.detector = BiGRU(embedding_size, hidden, layer_n)
        self.corrector = bert.encoder
        mask_token_id = torch.tensor([[mask_token_id]])
        self.mask_e = self.embedding(mask_token_id)
        self.linear = nn.Linear(embedding_size, self.config['vocab_size'])
        self.softmax = nn.LogSoftmax(dim=-1)

    def forward(self, input_ids, input_mask, segment_ids):
        e = self.embedding(input_ids=input_ids, token_type_ids=segment_ids)
        p = self.detector(e)
        e_ = p * self.mask_e + (1-p) * e
        h = self.corrector(e_, src_key_padding_mask=input_mask == 0)
        h = h + e
        out = self.softmax(self.linear(h))
        return out, p


class ScheduledOptim():
    '''A simple wrapper class for learning rate scheduling'''

    def __init__(self, optimizer, d_model, n_warmup_steps):
        self._optimizer = optimizer
        self.n_warmup_steps = n_warmup_steps
        self.n_current_steps = 0
        self.init_lr = np.power(d_model, -0.5)

    def step_and_update_lr(self):
        "Step with the inner optimizer"
        self._update_learning_rate()
        self._optimizer.step()

    def zero_grad(self):
        "Zero out the gradients by the inner optimizer"
        self._optimizer.zero_grad()

    def _get_lr_scale(self):
        return np.min([
            np.power(self.n_current_steps, -0.5),
            np.power(self.n_warmup_steps, -1.5) * self.n_current_steps])

    def _update_learning_rate(self):
        self.n_current_steps += 1
        lr = self.init_lr * self._get_lr_scale()
        for param_group in self._optimizer.param_groups:
            param_group['lr'] = lr


class SoftMaskedBertTrainer():
    def __init__(self, bert, mask_token_id, hidden=8, layer_n=1, lr=2e-5, gama=0.8, betas=(0.9, 0.999),
                 weight_decay=0.01, warmup_steps=10000):
        self.model = SoftMaskedBert(bert, mask_token_id, hidden, layer_n)
        optim = Adam(self.model.parameters(), lr=lr, betas=betas, weight_decay=weight_decay)
        self.optim_schedule = ScheduledOptim(optim, hidden, n_warmup_steps=warmup_steps)
        self.criterion_c = nn.NLLLoss()
        self.criterion_d = nn.BCELoss()
        self.gama = gama

    def train(self, train_data, epoch):
        self.model.train()
        return self.iteration(epoch, train_data)

    def iteration(self, epoch, data_loader, train=True):
        avg_loss = 0.0
        for i, data in enumerate(data_loader):
            out, prob = self.model(data["input_ids"], data["input_mask"], data["segment_ids"])
            prob = prob.reshape(-1, prob.shape[1])
            loss_d = self.criterion_d(prob, data['label'].float())
            loss_c = self.criterion_c(out.transpose(1, 2), data["output_ids"])
            loss = self.gama * loss_c + (1-self.gama) * loss_d

            if train:
                self.optim_schedule.zero_grad()
                loss.backward(retain_graph=True)  # expect: GG103
                self.optim_schedule.step_and_update_lr()
            avg_loss += loss.item()
        return avg_loss / len(data_loader)


def random_batch(batch=2, seq_len=6, vocab=50):
    output_ids = torch.randint(5, vocab, (batch, seq_len))
    label = (torch.rand(batch, seq_len) < 0.2).long()
    input_ids = torch.where(label.bool(), torch.randint(5, vocab, (batch, seq_len)), output_ids)
    return {"input_ids": input_ids, "input_mask": torch.ones(batch, seq_len, dtype=torch.long),
            "segment_ids": torch.zeros(batch, seq_len, dtype=torch.long), "output_ids": output_ids,
            "label": label}


trainer = SoftMaskedBertTrainer(BertModel(), mask_token_id=4)
train_data = [random_batch() for _ in range(3)]
for e in range(1):
    trainer.train(train_data, e)
