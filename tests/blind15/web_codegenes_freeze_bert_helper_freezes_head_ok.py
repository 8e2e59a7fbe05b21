# Source: https://www.codegenes.net/blog/freeze-bert-layers-pytorch
"""The BERT classifier with the blog's recipe: `freeze_bert` sets `requires_grad = False` only on
the parameters of `model.bert`, so the classification head trains and the loss has a graph. BERT is
a small stand-in (embedding + one TransformerEncoderLayer).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class TinyBert(nn.Module):
    """Stand-in for transformers.BertModel: returns the [CLS] hidden state."""

    def __init__(self, vocab=100, d_model=16):
        super().__init__()
        self.embeddings = nn.Embedding(vocab, d_model)
        self.encoder = nn.TransformerEncoderLayer(d_model, nhead=2, dim_feedforward=32, batch_first=True)

    def forward(self, input_ids):
        return self.encoder(self.embeddings(input_ids))[:, 0]


class BertClassifier(nn.Module):
    def __init__(self, num_labels=3):
        super().__init__()
        self.bert = TinyBert()
        self.dropout = nn.Dropout(0.1)
        self.classifier = nn.Linear(16, num_labels)

    def forward(self, input_ids):
        return self.classifier(self.dropout(self.bert(input_ids)))


def freeze_bert(model):
    for name, param in model.bert.named_parameters():
        param.requires_grad = False


def train_epoch(model, optimizer, batches):
    model.train()
    total = 0.0
    for input_ids, labels in batches:
        loss = F.cross_entropy(model(input_ids), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.item()
    return total / len(batches)


torch.manual_seed(0)
model = BertClassifier()
freeze_bert(model)
optimizer = torch.optim.AdamW(model.classifier.parameters(), lr=1e-3)
batches = [(torch.randint(0, 100, (4, 10)), torch.randint(0, 3, (4,))) for _ in range(3)]
for epoch in range(2):
    print(epoch, train_epoch(model, optimizer, batches))
