# Source: https://discuss.pytorch.org/t/runtimeerror-one-of-the-variables-needed-for-gradient-computation-has-been-modified-by-an-inplace-operation-torch-cuda-floattensor-32-768-which-is-output-0-of-tanhbackward-is-at-version-2-expected-version-0-instead-hint-enable-anomaly-detectio/137325
"""The forum poster's mixup classifier: forward takes BERT's pooler_output (a tanh output), keeps a
detached copy, then mixes samples of the same label by writing into the pooler output with index
assignment, `result[label_one_tensor] = lam * temp_result[...] + (1 - lam) * temp_result[...]`.
TanhBackward saved its output, the writes bump its version, and the training step's backward raises
"one of the variables needed for gradient computation has been modified by an inplace operation"
(the reported tensor is "output 0 of TanhBackward"). A small embedding-and-pooler encoder stands in
for BERT; the head, the two label groups and the training loop are the poster's, on random tokens."""
import copy
import random

import numpy as np
import torch
import torch.nn as nn


class TinyBert(nn.Module):
    """Stand-in for the BERT model: mean-pooled embeddings through a dense layer and tanh."""

    def __init__(self, vocab=50, hidden=16):
        super().__init__()
        self.embeddings = nn.Embedding(vocab, hidden)
        self.dense = nn.Linear(hidden, hidden)

    def forward(self, input_ids):
        pooled = self.embeddings(input_ids).mean(1)
        return torch.tanh(self.dense(pooled))


class MixupClassifier(nn.Module):
    def __init__(self, hidden=16):
        super().__init__()
        self.bert = TinyBert(hidden=hidden)
        self.head = nn.Linear(hidden, 8)
        self.fc = nn.Linear(8, 2)

    def forward(self, input, labels):
        result = self.bert(input)
        label_one = [idx for idx, dat in enumerate(labels) if dat.item() == 0]
        label_two = [idx for idx, dat in enumerate(labels) if dat.item() == 1]
        alpha = 0.5
        lam = np.random.beta(alpha, alpha)
        temp_result = result.detach()
        if label_one:
            label_one_tensor = torch.tensor(label_one)
            deep_label_one = copy.deepcopy(label_one)
            random.shuffle(deep_label_one)
            label_one_tensor_shuffle = torch.tensor(deep_label_one)
            result[label_one_tensor] = lam * temp_result[label_one_tensor, :] + (1 - lam) * temp_result[label_one_tensor_shuffle, :]
        if label_two:
            label_two_tensor = torch.tensor(label_two)
            deep_label_two = copy.deepcopy(label_two)
            random.shuffle(deep_label_two)
            label_two_tensor_shuffle = torch.tensor(deep_label_two)
            result[label_two_tensor] = lam * temp_result[label_two_tensor, :] + (1 - lam) * temp_result[label_two_tensor_shuffle, :]
        data = self.head(result)
        return data, self.fc(data), labels


model = MixupClassifier()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
criterion = nn.CrossEntropyLoss()

for step in range(3):
    tokens = torch.randint(0, 50, (8, 12))
    labels = torch.tensor([0, 1, 0, 1, 1, 0, 0, 1])
    _, logits, labels = model(tokens, labels)
    loss = criterion(logits, labels)
    optimizer.zero_grad()
    loss.backward()  # expect: GG103
    optimizer.step()
    print(step, loss.item())
