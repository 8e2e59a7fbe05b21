"""Data preparation for the intent classifier: utterances stay token ids until training."""
import torch


def build_batches(utterances, labels, batch_size=2):
    return [([torch.tensor(u) for u in utterances[i:i + batch_size]], torch.tensor(labels[i:i + batch_size]))
            for i in range(0, len(utterances), batch_size)]
