# Source: https://github.com/1KE-JI/HierVerb/issues/4
"""HierVerb (hierarchical verbalizer prompt tuning) on WebOfScience, fixed: `forward` passed
`input_ids.cpu()` to `_mask_tokens`, which on a CPU tensor is the batch's own ids, already saved by
the PLM's word embedding; the [MASK]/random writes then failed the backward ("[torch.LongTensor
[4, 512]] is at version 2; expected version 0"). The thread has no answer; the fix masks a copy,
`_mask_tokens(self.tokenizer, input_ids.clone().cpu())`, so the embedded ids stay as they were.
OpenPrompt's PromptForClassification, the verbalizers, BERT and its tokenizer are small stand-ins
written here; random token ids, a two-level label hierarchy."""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F

transformers_version = "4.30.2"


class TinyTokenizer:
    """Stand-in for BertTokenizer: [CLS]=1, [SEP]=2, [MASK]=3, words from 5 on."""
    mask_token = "[MASK]"

    def __init__(self, vocab_size=60):
        self.vocab_size = vocab_size

    def __len__(self):
        return self.vocab_size

    def get_special_tokens_mask(self, ids, already_has_special_tokens=True):
        return [1 if i in (0, 1, 2, 3) else 0 for i in ids]

    def convert_tokens_to_ids(self, token):
        return {"[PAD]": 0, "[CLS]": 1, "[SEP]": 2, "[MASK]": 3}[token]


def _mask_tokens(tokenizer, input_ids):
    """ Prepare masked tokens inputs/labels for masked language modeling: 80% MASK, 10% random, 10% original. """
    labels = input_ids.clone()
    probability_matrix = torch.full(labels.shape, 0.15)
    special_tokens_mask = [tokenizer.get_special_tokens_mask(val, already_has_special_tokens=True) for val in
                           labels.tolist()]
    probability_matrix.masked_fill_(torch.tensor(special_tokens_mask, dtype=torch.bool), value=0.0)
    masked_indices = torch.bernoulli(probability_matrix).bool()
    if [int(v) for v in transformers_version.split('.')][:3] >= [2, 4, 0]:
        ignore_value = -100
    else:
        ignore_value = -1
    labels[~masked_indices] = ignore_value
    indices_replaced = torch.bernoulli(torch.full(labels.shape, 0.8)).bool() & masked_indices
    input_ids[indices_replaced] = tokenizer.convert_tokens_to_ids(tokenizer.mask_token)
    indices_random = torch.bernoulli(torch.full(labels.shape, 0.5)).bool() & masked_indices & ~indices_replaced
    random_words = torch.randint(len(tokenizer), labels.shape, dtype=torch.long)
    input_ids[indices_random] = random_words[indices_random]
    return input_ids, labels


class TinyBertForMaskedLM(nn.Module):
    """Stand-in for BertForMaskedLM: returns (loss, logits, hidden) with labels, else (logits, hidden)."""

    def __init__(self, vocab_size, hidden=16):
        super().__init__()
        self.embeddings = nn.Embedding(vocab_size, hidden)
        self.encoder = nn.Linear(hidden, hidden)
        self.cls = nn.Linear(hidden, vocab_size)

    def forward(self, input_ids, attention_mask=None, labels=None):
        hidden = torch.tanh(self.encoder(self.embeddings(input_ids)))
        if attention_mask is not None:
            hidden = hidden * attention_mask.unsqueeze(-1)
        logits = self.cls(hidden)
        if labels is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), labels.view(-1), ignore_index=-100)
            return loss, logits, hidden
        return logits, hidden


class SoftVerbalizer(nn.Module):
    """Stand-in for OpenPrompt's SoftVerbalizer: a trainable head on the hidden state at [MASK]."""

    def __init__(self, hidden, num_classes):
        super().__init__()
        self.head_last_layer = nn.Linear(hidden, num_classes)

    def gather_outputs(self, outputs):
        return outputs[1]

    def process_outputs(self, outputs, batch=None):
        return self.head_last_layer(outputs)


class Processor:
    def __init__(self, n_leaf=6, n_top=3):
        # hier_mapping[0][1]: leaf label -> parent label
        self.hier_mapping = [[None, {i: i % n_top for i in range(n_leaf)}]]


class HierVerbPromptForClassification(nn.Module):
    def __init__(self, plm, verbalizer_list, tokenizer, args=None, processor=None, use_cuda=False):
        super().__init__()
        self.plm = plm
        self.tokenizer = tokenizer
        self.verbalizer_list = verbalizer_list
        self.verbLength = len(self.verbalizer_list)
        for idx, verbalizer in enumerate(self.verbalizer_list):
            self.__setattr__(f"verbalizer{idx}", verbalizer)
        self.args = args
        self.processor = processor
        self.use_cuda = use_cuda
        self.device = torch.device("cpu")

    def prompt_model(self, batch):
        return self.plm(input_ids=batch['input_ids'], attention_mask=batch['attention_mask'])

    def extract_at_mask(self, outputs, batch):
        outputs = outputs[torch.where(batch['loss_ids'] > 0)]
        return outputs.view(batch['loss_ids'].shape[0], -1, outputs.shape[1])

    def forward(self, batch):
        loss = 0
        loss_details = [0, 0, 0, 0]
        lm_loss = None
        args = self.args

        outputs = self.prompt_model(batch)
        outputs = self.verbalizer_list[0].gather_outputs(outputs)
        outputs_at_mask = self.extract_at_mask(outputs, batch)
        logits = []
        for idx in range(self.verbLength):
            label_words_logtis = self.__getattr__(f"verbalizer{idx}").process_outputs(outputs_at_mask[:, idx, :],
                                                                                      batch=batch)
            logits.append(label_words_logtis)

        if self.training:
            labels = batch['label']
            hier_labels = []
            hier_labels.insert(0, labels)
            for idx in range(args.depth - 2, -1, -1):
                cur_depth_labels = torch.zeros_like(labels)
                for i in range(len(labels)):
                    cur_depth_labels[i] = self.processor.hier_mapping[idx][1][hier_labels[0][i].tolist()]
                hier_labels.insert(0, cur_depth_labels)

            ## MLM loss
            if args.lm_training:
                input_ids = batch['input_ids']
                input_ids, labels = _mask_tokens(self.tokenizer, input_ids.clone().cpu())
                lm_inputs = {"input_ids": input_ids, "attention_mask": batch['attention_mask'], "labels": labels}
                for k, v in lm_inputs.items():
                    if v is not None:
                        lm_inputs[k] = v.to(self.device)
                lm_loss = self.plm(**lm_inputs)[0]

            loss_func = torch.nn.CrossEntropyLoss()
            for idx, cur_depth_label in enumerate(hier_labels):
                cur_depth_logits = logits[idx]
                loss += loss_func(cur_depth_logits, cur_depth_label)
            loss_details[0] += loss.item()

            if lm_loss is not None:
                if args.lm_alpha != -1:
                    loss = loss * args.lm_alpha + (1 - args.lm_alpha) * lm_loss
                else:
                    loss += lm_loss
                loss_details[1] += lm_loss.item()
            return logits, loss, loss_details
        else:
            return logits


def make_batches(n_batches, batch_size, seq_len, vocab_size, depth, n_leaf):
    batches = []
    for _ in range(n_batches):
        words = torch.randint(5, vocab_size, (batch_size, seq_len - depth - 2))
        cls, sep = torch.full((batch_size, 1), 1), torch.full((batch_size, 1), 2)
        masks = torch.full((batch_size, depth), 3)     # the template's [MASK] slots, one per level
        ids = torch.cat([cls, masks, words, sep], dim=1)
        loss_ids = torch.zeros(batch_size, seq_len, dtype=torch.long)
        loss_ids[:, 1:1 + depth] = 1
        batches.append((ids, torch.ones(batch_size, seq_len), torch.randint(0, n_leaf, (batch_size,)), loss_ids))
    return batches


parser = argparse.ArgumentParser()
parser.add_argument("--lm_training", default=1, type=int)
parser.add_argument("--lm_alpha", default=0.999, type=float)
parser.add_argument("--depth", default=2, type=int)
parser.add_argument("--max_grad_norm", default=1.0, type=float)
parser.add_argument("--lr", default=5e-5, type=float)
parser.add_argument("--lr2", default=1e-4, type=float)
parser.add_argument("--max_epochs", default=2, type=int)
args = parser.parse_args([])

torch.manual_seed(0)
device = torch.device("cpu")
tokenizer = TinyTokenizer()
plm = TinyBertForMaskedLM(len(tokenizer))
verbalizer_list = [SoftVerbalizer(16, 3), SoftVerbalizer(16, 6)]
prompt_model = HierVerbPromptForClassification(plm=plm, verbalizer_list=verbalizer_list, tokenizer=tokenizer,
                                               args=args, processor=Processor())
optimizer1 = torch.optim.AdamW(prompt_model.plm.parameters(), lr=args.lr)
optimizer2 = torch.optim.AdamW([p for v in verbalizer_list for p in v.parameters()], lr=args.lr2)
scheduler1 = None
scheduler2 = None
train_dataloader = make_batches(3, 4, 12, len(tokenizer), args.depth, 6)

for epoch in range(args.max_epochs):
    loss_detailed = [0, 0, 0, 0]
    prompt_model.train()
    idx = 0
    for batch in train_dataloader:
        batch = tuple(t.to(device) if isinstance(t, torch.Tensor) else t for t in batch)
        batch = {"input_ids": batch[0], "attention_mask": batch[1],
                 "label": batch[2], "loss_ids": batch[3]}
        logits, loss, cur_loss_detailed = prompt_model(batch)
        loss_detailed = [loss_detailed[idx] + value for idx, value in enumerate(cur_loss_detailed)]
        loss.backward()
        torch.nn.utils.clip_grad_norm_(prompt_model.parameters(), args.max_grad_norm)
        optimizer1.step()
        optimizer2.step()
        if scheduler1 is not None:
            scheduler1.step()
        if scheduler2 is not None:
            scheduler2.step()
        optimizer1.zero_grad()
        optimizer2.zero_grad()
        idx = idx + 1
    print("multi-verb loss, lm loss, constraint loss, contrastive loss are: ", loss_detailed)
