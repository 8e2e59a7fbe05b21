# Source: https://github.com/rsommerfeld/trocr/issues/5
"""rsommerfeld/trocr's training loop under DataParallel with the gathered per-GPU losses reduced
before the backward. The thread suggests `loss = loss.sum()`; that runs too but multiplies the
gradient by the number of GPUs, since each replica already averages over its shard, so the mean
is taken instead, which matches single-device training on equal shards."""
import torch
from torch import nn
from torch.nn import functional as F


class Seq2SeqLMOutput(dict):
    def __getattr__(self, name):
        return self[name]


class VisionEncoderDecoderModel(nn.Module):
    def __init__(self, vocab_size=12, hidden=16, max_len=5):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv2d(3, hidden, 4, 4), nn.ReLU(), nn.AdaptiveAvgPool2d((1, max_len)))
        self.embed = nn.Embedding(vocab_size, hidden)
        self.decoder = nn.GRU(hidden, hidden, batch_first=True)
        self.lm_head = nn.Linear(hidden, vocab_size)

    def forward(self, pixel_values, labels=None):
        memory = self.encoder(pixel_values).flatten(2).transpose(1, 2)  # (batch, max_len, hidden)
        decoder_input = self.embed(labels.clamp(min=0)) + memory
        hidden, _ = self.decoder(decoder_input)
        logits = self.lm_head(hidden)
        loss = None
        if labels is not None:
            loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), labels.reshape(-1), ignore_index=-100)
        return Seq2SeqLMOutput(loss=loss, logits=logits)


def _gather(outputs):
    first = outputs[0]
    if isinstance(first, torch.Tensor):
        if first.dim() == 0:  # torch warns and unsqueezes: one entry per device
            return torch.stack(outputs)
        return torch.cat(outputs, 0)
    if isinstance(first, dict):
        return type(first)((k, _gather([o[k] for o in outputs])) for k in first)
    return first


class DataParallel(nn.Module):
    """torch.nn.DataParallel over device_ids, run on CPU: one replica call per chunk of the batch."""

    def __init__(self, module, device_ids=(0, 1)):
        super().__init__()
        self.module = module
        self.device_ids = list(device_ids)

    def forward(self, **inputs):
        chunks = [dict(zip(inputs, values))
                  for values in zip(*(v.chunk(len(self.device_ids)) for v in inputs.values()))]
        return _gather([self.module(**chunk) for chunk in chunks])


def train_dataloader(batches=2, batch_size=4, max_len=5, vocab_size=12):
    for _ in range(batches):
        labels = torch.randint(1, vocab_size, (batch_size, max_len))
        labels[:, -1] = -100
        yield {"pixel_values": torch.randn(batch_size, 3, 16, 80), "labels": labels}


def train_model(model, epochs=1, device=torch.device("cpu")):
    model.to(device)
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-5)
    for epoch in range(epochs):
        for i, batch in enumerate(train_dataloader()):
            inputs: dict = batch
            for k, v in inputs.items():
                inputs[k] = v.to(device)

            outputs = model(**inputs)
            loss = outputs.loss.mean()
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            print(epoch, i, loss.tolist())


if __name__ == "__main__":
    model = VisionEncoderDecoderModel()
    model = DataParallel(model)
    train_model(model)
