# Source: https://github.com/roman-vygon/triplet_loss_kws/issues/6
"""triplet_loss_kws (keyword spotting with a triplet loss on NeMo 0.x): the L2Regularizer layer
(layers/l2.py) derives from NeMo's NonTrainableNM, whose call runs forward under torch.no_grad(),
so the normalised embeddings leave the graph and the triplet loss's backward raises "element 0 of
tensors does not require grad and does not have a grad_fn". The thread suggests setting
requires_grad=True on the output, which silences the error but trains nothing; the right fix
(_ok) is to let the normalisation run with grad (a trainable module). NeMo's neural-module bases
are replaced by small stand-ins written here; encoder and data shrunk.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class NeuralModule(nn.Module):
    """Stand-in for nemo.backends.pytorch.TrainableNM."""

    def __call__(self, **kwargs):
        return super().__call__(**kwargs)


class NonTrainableNM(NeuralModule):
    """Stand-in for nemo.backends.pytorch.NonTrainableNM: forward runs without grad."""

    def __call__(self, **kwargs):
        with torch.no_grad():
            return super().__call__(**kwargs)


class JasperEncoder(NeuralModule):
    def __init__(self, feat_in, hidden):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv1d(feat_in, hidden, 3, padding=1), nn.ReLU(),
                                  nn.Conv1d(hidden, hidden, 3, padding=1), nn.ReLU())

    def forward(self, audio_signal):
        return self.conv(audio_signal)


class L2Regularizer(NonTrainableNM):
    """Performs L2 regularization over samples."""

    def regularize(self, embeds):
        l2_embeds = F.normalize(embeds, p=2, dim=-1)
        return l2_embeds

    def forward(self, embeds):
        l2_signal = self.regularize(embeds)
        return l2_signal


class OnlineTripletLoss(NeuralModule):
    def __init__(self, margin):
        super().__init__()
        self.margin = margin

    def get_triplets(self, labels):
        triplets = []
        for a in range(len(labels)):
            pos = [p for p in range(len(labels)) if p != a and labels[p] == labels[a]]
            neg = [n for n in range(len(labels)) if labels[n] != labels[a]]
            if pos and neg:
                triplets.append((a, pos[0], neg[0]))
        return torch.tensor(triplets)

    def forward(self, embeds, targets):
        triplets = self.get_triplets(targets.tolist())
        ap = (embeds[triplets[:, 0]] - embeds[triplets[:, 1]]).pow(2).sum(1)
        an = (embeds[triplets[:, 0]] - embeds[triplets[:, 2]]).pow(2).sum(1)
        losses = F.relu(ap - an + self.margin)
        return losses.mean()


encoder = JasperEncoder(feat_in=8, hidden=16)
l2_regularizer = L2Regularizer()
triplet_loss = OnlineTripletLoss(margin=0.5)
optimizer = torch.optim.Adam(encoder.parameters(), lr=1e-3)


def train_step(audio, labels):
    encoded = encoder(audio_signal=audio)
    pooled = encoded.mean(-1)
    embeds = l2_regularizer(embeds=pooled)
    loss = triplet_loss(embeds=embeds, targets=labels)
    optimizer.zero_grad()
    loss.backward()  # expect: GG104
    optimizer.step()
    return loss.item()


for epoch in range(2):
    audio = torch.randn(8, 8, 12)
    labels = torch.tensor([0, 0, 1, 1, 2, 2, 3, 3])
    train_step(audio, labels)
