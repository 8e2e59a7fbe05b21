# Source: https://www.codetd.com/en/article/17161119
"""A hierarchical multi-label text classifier (the post's BERT model): the sentence goes through
BERT once to predict the first-level label, the predicted label's embedding tokens are written
into the last three positions of the input ids, `context[:, -3:] = extra`, together with
`mask[:, -3:] = 1`, and the sentence goes through BERT again for the second-level label. The
first pass's word embedding saved `context` (its indices) for its backward, and the slice
assignment overwrites it in place, so loss.backward() fails ("one of the variables needed for
gradient computation has been modified by an inplace operation", on a LongTensor at version 1).
A small embedding + transformer encoder + pooler stands in for the pretrained BERT; the batch is
the post's (token ids, sequence length, mask) triple with random ids and labels."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class TinyBert(nn.Module):
    """Stands in for pytorch_pretrained BertModel: returns (sequence_output, pooled_output)."""

    def __init__(self, vocab_size=100, hidden_size=32):
        super().__init__()
        self.embeddings = nn.Embedding(vocab_size, hidden_size)
        self.position_embeddings = nn.Embedding(64, hidden_size)
        self.encoder = nn.TransformerEncoder(
            nn.TransformerEncoderLayer(hidden_size, 4, 64, dropout=0.0, batch_first=True), 1)
        self.pooler = nn.Linear(hidden_size, hidden_size)

    def forward(self, input_ids, attention_mask):
        positions = torch.arange(input_ids.size(1))
        x = self.embeddings(input_ids) + self.position_embeddings(positions)
        seq = self.encoder(x, src_key_padding_mask=attention_mask == 0)
        return seq, torch.tanh(self.pooler(seq[:, 0]))


class Config:
    hidden_size = 32
    num_classes_A = 5
    num_classes_B = 12
    learning_rate = 5e-5


class Model(nn.Module):
    def __init__(self, config):
        super(Model, self).__init__()
        self.bert = TinyBert(hidden_size=config.hidden_size)
        self.fc1 = nn.Linear(config.hidden_size, config.num_classes_A)
        self.fc2 = nn.Linear(config.hidden_size, config.num_classes_B)

    def forward(self, x, label_A_emb):
        context = x[0]  # 输入的句子
        mask = x[2]  # 对padding部分进行mask，和句子一个size，padding部分用0表示

        d1 = self.bert(context, attention_mask=mask)
        logit1 = self.fc1(d1[1])  # [batch_size, label_A_num]
        idx = torch.max(logit1.data, 1)[1]  # [batch_size]
        extra = label_A_emb[idx]  # the predicted first-level label's three tokens

        context[:, -3:] = extra
        mask[:, -3:] = 1

        d2 = self.bert(context, attention_mask=mask)
        logit2 = self.fc2(d2[1])  # [batch_size, label_B_num]

        return logit1, logit2


def train(config, model, train_iter, label_A_emb):
    optimizer = torch.optim.Adam(model.parameters(), lr=config.learning_rate)
    model.train()
    for i, (trains, labels_A, labels_B) in enumerate(train_iter):
        logit1, logit2 = model(trains, label_A_emb)
        model.zero_grad()
        loss = F.cross_entropy(logit1, labels_A) + F.cross_entropy(logit2, labels_B)
        loss.backward()  # expect: GG103
        optimizer.step()


def build_iterator(config, n_batches=2, batch_size=4, pad_size=16):
    batches = []
    for _ in range(n_batches):
        token_ids = torch.randint(1, 100, (batch_size, pad_size))
        seq_len = torch.full((batch_size,), pad_size)
        mask = torch.ones(batch_size, pad_size, dtype=torch.long)
        mask[:, -3:] = 0  # the last three positions are reserved for the label tokens
        batches.append(((token_ids, seq_len, mask),
                        torch.randint(0, config.num_classes_A, (batch_size,)),
                        torch.randint(0, config.num_classes_B, (batch_size,))))
    return batches


config = Config()
model = Model(config)
label_A_emb = torch.randint(1, 100, (config.num_classes_A, 3))  # three token ids per first-level label
train(config, model, build_iterator(config), label_A_emb)
