# Source: https://github.com/OpenNMT/OpenNMT-py/issues/2153
"""The reporter's OpenNMT-py joint-learning change with the right fix (no answer in the stored
thread): class_loss.backward(retain_graph=True) keeps the encoder's graph, which the sharded NMT
backward at the end of shards() walks afterwards through the memory bank and encoder state; the
two backwards add their gradients before the optimizer steps."""
import torch
import torch.nn as nn


class Statistics:
    def __init__(self, loss=0, n_words=0):
        self.loss, self.n_words = loss, n_words

    def update(self, stat):
        self.loss += stat.loss
        self.n_words += stat.n_words


def filter_shard_state(state, shard_size=None):
    for k, v in state.items():
        if shard_size is None:
            yield k, v
        if v is not None:
            v_split = []
            if isinstance(v, torch.Tensor):
                for v_chunk in torch.split(v, shard_size):
                    v_chunk = v_chunk.data.clone()
                    v_chunk.requires_grad = v.requires_grad
                    v_split.append(v_chunk)
            yield k, (v, v_split)


def shards(state, shard_size, eval_only=False):
    if eval_only:
        yield filter_shard_state(state)
    else:
        non_none = dict(filter_shard_state(state, shard_size))
        keys, values = zip(*((k, [v_chunk for v_chunk in v_split]) for k, (_, v_split) in non_none.items()))
        for shard_tensors in zip(*values):
            yield dict(zip(keys, shard_tensors))

        # Assumed backprop'd
        variables = []
        for k, (v, v_split) in non_none.items():
            if isinstance(v, torch.Tensor) and state[k].requires_grad:
                variables.extend(zip(torch.split(state[k], shard_size), [v_chunk.grad for v_chunk in v_split]))
        inputs, grads = zip(*variables)
        torch.autograd.backward(inputs, grads)


class RNNEncoder(nn.Module):
    def __init__(self, vocab, hidden):
        super().__init__()
        self.embeddings = nn.Embedding(vocab, hidden)
        self.rnn = nn.LSTM(hidden, hidden)

    def forward(self, src):
        emb = self.embeddings(src)
        memory_bank, enc_state = self.rnn(emb)
        return enc_state, memory_bank


class RNNDecoder(nn.Module):
    def __init__(self, vocab, hidden):
        super().__init__()
        self.embeddings = nn.Embedding(vocab, hidden)
        self.rnn = nn.LSTM(2 * hidden, hidden)

    def forward(self, tgt, memory_bank, enc_state):
        emb = self.embeddings(tgt)
        context = memory_bank.mean(0, keepdim=True).expand(emb.size(0), -1, -1)
        dec_out, _ = self.rnn(torch.cat([emb, context], -1), enc_state)
        return dec_out


class NMTModel(nn.Module):
    def __init__(self, vocab=30, hidden=8, n_classes=3):
        super().__init__()
        self.encoder = RNNEncoder(vocab, hidden)
        self.decoder = RNNDecoder(vocab, hidden)
        self.classifier = nn.Linear(hidden, n_classes)

    def forward(self, src, tgt):
        enc_state, memory_bank = self.encoder(src)
        dec_out = self.decoder(tgt[:-1], memory_bank, enc_state)
        class_logits = self.classifier(enc_state[0][-1])
        return dec_out, class_logits


class NMTLossCompute(nn.Module):
    def __init__(self, generator, padding_idx=0):
        super().__init__()
        self.generator = generator
        self.criterion = nn.NLLLoss(ignore_index=padding_idx, reduction="sum")
        self.class_criterion = nn.CrossEntropyLoss()

    def _make_shard_state(self, batch, output):
        return {"output": output, "target": batch["tgt"][1:]}

    def _compute_loss(self, batch, output, target):
        scores = self.generator(output.view(-1, output.size(2)))
        gtruth = target.contiguous().view(-1)
        loss = self.criterion(scores, gtruth)
        return loss, Statistics(loss.item(), gtruth.numel())

    def _compute_class_loss(self, stargets_logits, stargets_refs):
        loss = self.class_criterion(stargets_logits, stargets_refs)
        return loss, Statistics(loss.item(), stargets_refs.numel())

    def __call__(self, batch, output, stargets_logits, stargets_refs, normalization=1.0, shard_size=0):
        shard_state = self._make_shard_state(batch, output)
        if shard_size == 0:
            loss, stats = self._compute_loss(batch, **shard_state)
            return loss / float(normalization), stats
        batch_stats = Statistics()
        class_loss, class_stats = self._compute_class_loss(stargets_logits, stargets_refs)
        class_loss.backward(retain_graph=True)
        batch_stats.update(class_stats)
        for shard in shards(shard_state, shard_size):
            loss, stats = self._compute_loss(batch, **shard)
            loss.div(float(normalization)).backward()
            batch_stats.update(stats)
        return None, batch_stats


def train(model, loss_compute, optim, batches, shard_size=2):
    model.train()
    for batch in batches:
        optim.zero_grad()
        dec_out, class_logits = model(batch["src"], batch["tgt"])
        _, stats = loss_compute(batch, dec_out, class_logits, batch["class"],
                                normalization=batch["tgt"].size(1), shard_size=shard_size)
        optim.step()


if __name__ == "__main__":
    vocab = 30
    model = NMTModel(vocab=vocab)
    generator = nn.Sequential(nn.Linear(8, vocab), nn.LogSoftmax(dim=-1))
    loss_compute = NMTLossCompute(generator)
    optim = torch.optim.Adam(list(model.parameters()) + list(generator.parameters()), lr=1e-3)
    batches = [{"src": torch.randint(1, vocab, (6, 4)), "tgt": torch.randint(1, vocab, (5, 4)),
                "class": torch.randint(0, 3, (4,))} for _ in range(2)]
    train(model, loss_compute, optim, batches)
