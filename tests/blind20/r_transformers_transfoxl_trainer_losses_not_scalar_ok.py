# Source: https://github.com/huggingface/transformers/issues/9448
"""transformers #9448 "Cannot use TransfoXLLMHeadModel with Trainer class because it returns a
non scalar loss": the reporter trains a ``TransfoXLLMHeadModel`` from scratch on music data
encoded as language modelling, with a Dataset whose ``__getitem__`` returns ``input_ids``,
``labels`` (and ``mems: None``), through the ``Trainer`` class (transformers 3.5.1).

``TransfoXLLMHeadModel.forward`` with ``labels`` returns, as its first output, the per-token
negative log-likelihoods from its adaptive softmax, ``softmax_output.view(bsz, tgt_len - 1)`` --
not a reduced loss.  ``Trainer.compute_loss`` takes ``outputs[0]`` as the loss and
``training_step`` calls ``loss.backward()`` on that (bsz, tgt_len - 1) matrix: torch raises
"grad can be implicitly created only for scalar outputs".

Fixed here as sgugger answered: subclass ``Trainer`` and override ``compute_loss`` to reduce the losses,
taking the mean.  Stand-ins: a small Transformer-XL-like LM head model (embedding, one causal
attention layer over memory + segment, linear + log-softmax "crit" returning per-token losses
exactly as ``ProjectedAdaptiveLogSoftmax`` does), and the 3.5.1 ``Trainer`` loop
(``compute_loss`` -> ``outputs[0]``, ``loss.backward()``, clip, ``optimizer.step()``,
``model.zero_grad()``); random token data.
"""
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset


# ---- stand-ins for transformers (3.5.1) ----
class TransfoXLConfig:
    def __init__(self, vocab_size=64, d_model=32, n_head=2, mem_len=8):
        self.vocab_size = vocab_size
        self.d_model = d_model
        self.n_head = n_head
        self.mem_len = mem_len


class TransfoXLModel(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.mem_len = config.mem_len
        self.word_emb = nn.Embedding(config.vocab_size, config.d_model)
        self.layer = nn.TransformerEncoderLayer(config.d_model, config.n_head, dim_feedforward=64,
                                                dropout=0.0, batch_first=True)

    def forward(self, input_ids, mems=None):
        word_emb = self.word_emb(input_ids)
        if mems is not None:
            cat = torch.cat([mems, word_emb], dim=1)
        else:
            cat = word_emb
        klen, qlen = cat.size(1), word_emb.size(1)
        causal = torch.triu(torch.ones(klen, klen, dtype=torch.bool), diagonal=1)
        hidden = self.layer(cat, src_mask=causal)[:, -qlen:]
        new_mems = cat[:, -self.mem_len:].detach()
        return hidden, new_mems


class ProjectedAdaptiveLogSoftmax(nn.Module):
    def __init__(self, vocab_size, d_model):
        super().__init__()
        self.out_layer = nn.Linear(d_model, vocab_size)

    def forward(self, hidden, labels=None):
        if labels is not None:
            # Shift so that tokens < n predict n
            hidden = hidden[..., :-1, :].contiguous()
            labels = labels[..., 1:].contiguous()
            hidden = hidden.view(-1, hidden.size(-1))
            labels = labels.view(-1)
        logprob = torch.log_softmax(self.out_layer(hidden), dim=-1)
        if labels is None:
            return logprob
        return -logprob.gather(1, labels.unsqueeze(1)).squeeze(1)


class TransfoXLLMHeadModel(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.transformer = TransfoXLModel(config)
        self.crit = ProjectedAdaptiveLogSoftmax(config.vocab_size, config.d_model)

    def forward(self, input_ids=None, mems=None, labels=None):
        bsz, tgt_len = input_ids.size(0), input_ids.size(1)
        last_hidden, new_mems = self.transformer(input_ids, mems=mems)
        pred_hid = last_hidden[:, -tgt_len:]
        softmax_output = self.crit(pred_hid, labels)
        prediction_scores = softmax_output.view(bsz, tgt_len, -1) if labels is None else ()
        loss = softmax_output.view(bsz, tgt_len - 1) if labels is not None else None
        output = (prediction_scores, new_mems)
        return ((loss,) + output) if loss is not None else output


class TrainingArguments:
    def __init__(self, output_dir, num_train_epochs=1, per_device_train_batch_size=4,
                 learning_rate=5e-4, max_grad_norm=1.0, n_gpu=0, gradient_accumulation_steps=1):
        self.output_dir = output_dir
        self.num_train_epochs = num_train_epochs
        self.per_device_train_batch_size = per_device_train_batch_size
        self.learning_rate = learning_rate
        self.max_grad_norm = max_grad_norm
        self.n_gpu = n_gpu
        self.gradient_accumulation_steps = gradient_accumulation_steps


def default_data_collator(features):
    first = features[0]
    batch = {}
    for k, v in first.items():
        if v is not None and not isinstance(v, str):
            batch[k] = torch.stack([f[k] for f in features])
    return batch


class Trainer:
    def __init__(self, model, args, train_dataset, data_collator=None):
        self.model = model
        self.args = args
        self.train_dataset = train_dataset
        self.data_collator = data_collator or default_data_collator

    def compute_loss(self, model, inputs):
        outputs = model(**inputs)
        return outputs["loss"] if isinstance(outputs, dict) else outputs[0]

    def training_step(self, model, inputs):
        model.train()
        loss = self.compute_loss(model, inputs)
        if self.args.n_gpu > 1:
            loss = loss.mean()  # mean() to average on multi-gpu parallel training
        if self.args.gradient_accumulation_steps > 1:
            loss = loss / self.args.gradient_accumulation_steps
        loss.backward()
        return loss.detach()

    def train(self):
        loader = DataLoader(self.train_dataset, batch_size=self.args.per_device_train_batch_size,
                            collate_fn=self.data_collator)
        optimizer = torch.optim.AdamW(self.model.parameters(), lr=self.args.learning_rate)
        model = self.model
        tr_loss = torch.tensor(0.0)
        model.zero_grad()
        for epoch in range(self.args.num_train_epochs):
            for step, inputs in enumerate(loader):
                tr_loss += self.training_step(model, inputs)
                torch.nn.utils.clip_grad_norm_(model.parameters(), self.args.max_grad_norm)
                optimizer.step()
                model.zero_grad()
        return tr_loss


# ---- the reporter's script ----
class Encoding:
    def __init__(self, ids):
        self.ids = ids


class ExampleDataset(Dataset):
    def __init__(self, encodings):
        self.encodings = encodings

    def __len__(self):
        return len(self.encodings)

    def __getitem__(self, index):
        sample = self.encodings[index]
        return {'input_ids': torch.tensor(sample.ids), 'labels': torch.tensor(sample.ids), 'mems': None}


torch.manual_seed(0)
encodings = [Encoding(torch.randint(0, 64, (16,)).tolist()) for _ in range(8)]
example_dataset = ExampleDataset(encodings)

config = TransfoXLConfig(vocab_size=64, d_model=32, n_head=2, mem_len=8)
model = TransfoXLLMHeadModel(config)

training_args = TrainingArguments(output_dir='./results', num_train_epochs=2, per_device_train_batch_size=4)
class TransfoXLTrainer(Trainer):
    # fix: reduce the per-token losses the model returns to one number
    def compute_loss(self, model, inputs):
        outputs = model(**inputs)
        losses = outputs["loss"] if isinstance(outputs, dict) else outputs[0]
        return losses.mean()


trainer = TransfoXLTrainer(model=model, args=training_args, train_dataset=example_dataset)
trainer.train()
