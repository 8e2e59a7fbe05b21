# Source: https://github.com/z814081807/DeepNER/issues/19
"""Training DeepNER's SpanModel (Tianchi Chinese NER baseline, src/utils/model_utils.py): the
model builds its criterion with `reduction = 'none'` (kept for its pseudo-label weighting) and,
for ordinary batches without pseudo labels, returns start_loss + end_loss, one loss per
non-padding token, so train()'s loss.backward() raises "grad can be implicitly created only for
scalar outputs" (the author and a commenter: use the default 'mean'). A small embedding +
transformer encoder stands in for the pretrained BERT (BertModel.from_pretrained), random token
and span-label ids for the data (.view(-1, 512) uses the batch's sequence length); the trainer
keeps its plain path (no fp16, no adversarial training, one device)."""
import torch
import torch.nn as nn


class TinyBert(nn.Module):
    """Stands in for transformers' BertModel: returns (sequence_output,)."""
    def __init__(self, vocab_size=100, hidden_size=32, hidden_dropout_prob=0.1):
        super().__init__()
        self.config = type('BertConfig', (), {'hidden_size': hidden_size})()
        self.embeddings = nn.Embedding(vocab_size, hidden_size)
        self.token_type_embeddings = nn.Embedding(2, hidden_size)
        self.encoder = nn.TransformerEncoder(
            nn.TransformerEncoderLayer(hidden_size, 4, 64, hidden_dropout_prob, batch_first=True), 2)

    def forward(self, input_ids, attention_mask, token_type_ids):
        x = self.embeddings(input_ids) + self.token_type_embeddings(token_type_ids)
        return (self.encoder(x, src_key_padding_mask=attention_mask == 0),)


class BaseModel(nn.Module):
    def __init__(self, bert_dir, dropout_prob):
        super(BaseModel, self).__init__()
        self.bert_module = TinyBert(hidden_dropout_prob=dropout_prob)
        self.bert_config = self.bert_module.config

    @staticmethod
    def _init_weights(blocks, **kwargs):
        for block in blocks:
            for module in block.modules():
                if isinstance(module, nn.Linear):
                    if module.bias is not None:
                        nn.init.zeros_(module.bias)


class SpanModel(BaseModel):
    def __init__(self, bert_dir, num_tags, dropout_prob=0.1, loss_type='ce', **kwargs):
        super(SpanModel, self).__init__(bert_dir, dropout_prob=dropout_prob)
        out_dims = self.bert_config.hidden_size
        mid_linear_dims = kwargs.pop('mid_linear_dims', 16)
        self.num_tags = num_tags
        self.mid_linear = nn.Sequential(nn.Linear(out_dims, mid_linear_dims), nn.ReLU(), nn.Dropout(dropout_prob))
        out_dims = mid_linear_dims
        self.start_fc = nn.Linear(out_dims, num_tags)
        self.end_fc = nn.Linear(out_dims, num_tags)

        reduction = 'none'
        if loss_type == 'ce':
            self.criterion = nn.CrossEntropyLoss(reduction=reduction)

        self.loss_weight = nn.Parameter(torch.FloatTensor(1), requires_grad=True)
        self.loss_weight.data.fill_(-0.2)
        self._init_weights([self.mid_linear, self.start_fc, self.end_fc])

    def forward(self, token_ids, attention_masks, token_type_ids, start_ids=None, end_ids=None, pseudo=None):
        bert_outputs = self.bert_module(input_ids=token_ids, attention_mask=attention_masks,
                                        token_type_ids=token_type_ids)
        seq_out = bert_outputs[0]
        seq_out = self.mid_linear(seq_out)
        start_logits = self.start_fc(seq_out)
        end_logits = self.end_fc(seq_out)
        out = (start_logits, end_logits, )

        if start_ids is not None and end_ids is not None and self.training:
            start_logits = start_logits.view(-1, self.num_tags)
            end_logits = end_logits.view(-1, self.num_tags)

            # 去掉 padding 部分的标签，计算真实 loss
            active_loss = attention_masks.view(-1) == 1
            active_start_logits = start_logits[active_loss]
            active_end_logits = end_logits[active_loss]
            active_start_labels = start_ids.view(-1)[active_loss]
            active_end_labels = end_ids.view(-1)[active_loss]

            if pseudo is not None:
                # (batch,)
                seq_len = token_ids.shape[1]
                start_loss = self.criterion(start_logits, start_ids.view(-1)).view(-1, seq_len).mean(dim=-1)
                end_loss = self.criterion(end_logits, end_ids.view(-1)).view(-1, seq_len).mean(dim=-1)
                # nums of pseudo data
                pseudo_nums = pseudo.sum().item()
                total_nums = token_ids.shape[0]
                # learning parameter
                rate = torch.sigmoid(self.loss_weight)
                if pseudo_nums == 0:
                    start_loss = start_loss.mean()
                    end_loss = end_loss.mean()
                else:
                    if total_nums == pseudo_nums:
                        start_loss = (rate*pseudo*start_loss).sum() / pseudo_nums
                        end_loss = (rate*pseudo*end_loss).sum() / pseudo_nums
                    else:
                        start_loss = (rate*pseudo*start_loss).sum() / pseudo_nums \
                            + ((1 - rate) * (1 - pseudo) * start_loss).sum() / (total_nums - pseudo_nums)
                        end_loss = (rate*pseudo*end_loss).sum() / pseudo_nums \
                            + ((1 - rate) * (1 - pseudo) * end_loss).sum() / (total_nums - pseudo_nums)
            else:
                start_loss = self.criterion(active_start_logits, active_start_labels)
                end_loss = self.criterion(active_end_logits, active_end_labels)

            loss = start_loss + end_loss
            out = (loss, ) + out
        return out


def train(model, train_loader, train_epochs=1, max_grad_norm=1.0):
    optimizer = torch.optim.AdamW(model.parameters(), lr=2e-5, eps=1e-8)
    use_n_gpus = False
    for epoch in range(train_epochs):
        for step, batch_data in enumerate(train_loader):
            model.train()
            loss = model(**batch_data)[0]
            if use_n_gpus:
                loss = loss.mean()
            loss.backward()  # expect: GG105
            torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
            optimizer.step()
            model.zero_grad()


def random_batch(batch=2, seq_len=10, num_tags=5):
    masks = torch.ones(batch, seq_len, dtype=torch.long)
    masks[1, 7:] = 0
    return {'token_ids': torch.randint(1, 100, (batch, seq_len)), 'attention_masks': masks,
            'token_type_ids': torch.zeros(batch, seq_len, dtype=torch.long),
            'start_ids': torch.randint(0, num_tags, (batch, seq_len)),
            'end_ids': torch.randint(0, num_tags, (batch, seq_len))}


model = SpanModel(bert_dir='bert/torch_roberta_wwm', num_tags=5)
train(model, [random_batch() for _ in range(2)])
