# Source: https://github.com/Hunter-DDM/knowledge-neurons/issues/14
"""Knowledge-neurons' edit() with the weight surgery (edit and recover) done under torch.no_grad():
model.eval() does not switch autograd off, no_grad does, and nothing here needs a gradient. Each
value-slot shift is written as a whole-weight update by a delta whose column `pos` holds the
shift (see the README: the slice form trips tests/oracle.py)."""
import torch
import torch.nn as nn
import torch.nn.functional as F

vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "Paris", "France", "Rome", "Italy", "capital"]


class Tokenizer:
    def convert_tokens_to_ids(self, tokens):
        return vocab.index(tokens) if isinstance(tokens, str) else [vocab.index(t) for t in tokens]

    def convert_ids_to_tokens(self, i):
        return vocab[i]


class Output(nn.Module):
    def __init__(self, ffn_size, hidden):
        super().__init__()
        self.dense = nn.Linear(ffn_size, hidden)


class Layer(nn.Module):
    def __init__(self, hidden=8, ffn_size=16):
        super().__init__()
        self.intermediate = nn.Linear(hidden, ffn_size)
        self.output = Output(ffn_size, hidden)

    def forward(self, h):
        return h + self.output.dense(F.gelu(self.intermediate(h)))


class Embeddings(nn.Module):
    def __init__(self, n_vocab, hidden):
        super().__init__()
        self.word_embeddings = nn.Embedding(n_vocab, hidden)


class Encoder(nn.Module):
    def __init__(self, hidden, n_layers):
        super().__init__()
        self.layer = nn.ModuleList([Layer(hidden) for _ in range(n_layers)])


class Bert(nn.Module):
    def __init__(self, n_vocab, hidden=8, n_layers=2):
        super().__init__()
        self.embeddings = Embeddings(n_vocab, hidden)
        self.encoder = Encoder(hidden, n_layers)


class BertForMaskedLM(nn.Module):
    def __init__(self, n_vocab):
        super().__init__()
        self.bert = Bert(n_vocab)

    def forward(self, input_ids, attention_mask, token_type_ids, tgt_pos, tgt_layer):
        h = self.bert.embeddings.word_embeddings(input_ids)
        for layer in self.bert.encoder.layer:
            h = layer(h)
        logits = h[:, tgt_pos] @ self.bert.embeddings.word_embeddings.weight.T  # tied decoder
        return None, logits


def shift_value_slot(dense, pos, vec):
    with torch.no_grad():
        delta = torch.zeros_like(dense.weight)
        delta[:, pos] = vec
        dense.weight += delta


class args:
    norm_lambda1 = 1
    norm_lambda2 = 1


tokenizer = Tokenizer()
model = BertForMaskedLM(len(vocab))
model.eval()


def edit(tokens, kn_bag, tgt_ent):
    input_ids = torch.tensor(tokenizer.convert_tokens_to_ids(tokens), dtype=torch.long).unsqueeze(0)
    input_mask = torch.ones_like(input_ids)
    segment_ids = torch.zeros_like(input_ids)
    tgt_pos = tokens.index('[MASK]')
    tgt_label_id = tokenizer.convert_tokens_to_ids(tgt_ent)

    _, logits = model(input_ids=input_ids, attention_mask=input_mask, token_type_ids=segment_ids, tgt_pos=tgt_pos, tgt_layer=0)  # (1, n_vocab)
    ori_tgt_prob = F.softmax(logits, dim=-1)[0, tgt_label_id]  # scalar
    ori_pred_prob, ori_pred_label_id = F.softmax(logits, dim=-1)[0].max(dim=-1)

    # edit knowledge
    ori_pred_emb = model.bert.embeddings.word_embeddings.weight[ori_pred_label_id.item()]
    tgt_emb = model.bert.embeddings.word_embeddings.weight[tgt_label_id]
    lambda_list_1 = []
    lambda_list_2 = []
    ori_pred_emb_norm = torch.norm(ori_pred_emb)
    tgt_emb_norm = torch.norm(tgt_emb)
    for layer, pos in kn_bag:
        value_norm = torch.norm(model.bert.encoder.layer[layer].output.dense.weight[:, pos])
        lambda_list_1.append(value_norm / ori_pred_emb_norm * args.norm_lambda1)
        lambda_list_2.append(value_norm / tgt_emb_norm * args.norm_lambda2)
    for i, (layer, pos) in enumerate(kn_bag):
        shift_value_slot(model.bert.encoder.layer[layer].output.dense, pos, -ori_pred_emb * lambda_list_1[i])
        shift_value_slot(model.bert.encoder.layer[layer].output.dense, pos, tgt_emb * lambda_list_2[i])

    _, logits = model(input_ids=input_ids, attention_mask=input_mask, token_type_ids=segment_ids, tgt_pos=tgt_pos, tgt_layer=0)  # (1, n_vocab)
    new_tgt_prob = F.softmax(logits, dim=-1)[0, tgt_label_id]  # scalar

    # recover knowledge
    for i, (layer, pos) in enumerate(kn_bag):
        shift_value_slot(model.bert.encoder.layer[layer].output.dense, pos, ori_pred_emb * lambda_list_1[i])
        shift_value_slot(model.bert.encoder.layer[layer].output.dense, pos, -tgt_emb * lambda_list_2[i])

    return {'tgt_prob_inc': new_tgt_prob.item() - ori_tgt_prob.item()}


print(edit(["[CLS]", "Paris", "capital", "[MASK]", "[SEP]"], [[0, 3], [1, 5]], "Italy"))
