"""Data preparation for the intent classifier: tokenised utterances are embedded once."""
import torch


def build_batches(embedding, utterances, labels, batch_size=2):
    vectors = [embedding(torch.tensor(u)).mean(0) for u in utterances]
    return [(torch.stack(vectors[i:i + batch_size]), torch.tensor(labels[i:i + batch_size]))
            for i in range(0, len(vectors), batch_size)]
