# Source: https://github.com/roman-vygon/triplet_loss_kws/issues/6
"""The right fix, not the repository's: L2 normalization is a TrainableNM (a module whose forward
records the graph), so the triplet loss reaches the encoder. The repository's answer, setting
`l2_embeds.requires_grad = True` inside the no_grad forward, makes backward run but leaves the
encoder without gradients (the loss starts at a new leaf). Same stand-in NeMo classes, encoder,
selector and batches."""
import itertools

import torch
import torch.nn as nn
import torch.nn.functional as F


class NeuralModule(nn.Module):
    pass


class TrainableNM(NeuralModule):
    pass


class NonTrainableNM(NeuralModule):
    def __call__(self, *input, **kwargs):
        with torch.no_grad():
            return self.forward(*input, **kwargs)


class LossNM(NeuralModule):
    def forward(self, **kwargs):
        return self._loss_function(**kwargs)


class Res15Encoder(TrainableNM):
    def __init__(self, n_maps=8, emb=16):
        super().__init__()
        self.conv0 = nn.Conv2d(1, n_maps, 3, padding=1, bias=False)
        self.conv1 = nn.Conv2d(n_maps, n_maps, 3, padding=1, dilation=1, bias=False)
        self.bn1 = nn.BatchNorm2d(n_maps, affine=False)
        self.proj = nn.Linear(n_maps, emb)

    def forward(self, audio_signal):
        x = F.relu(self.conv0(audio_signal.unsqueeze(1)))
        x = self.bn1(F.relu(self.conv1(x))) + x
        x = x.mean(dim=(2, 3))
        return self.proj(x).unsqueeze(-1)  # (B, D, T=1)


class L2Regularizer(TrainableNM):
    """Performs L2 regularization over samples.
        i.e. makes the sum of squares of embeddings equal to 1
    """

    def regularize(self, embeds):
        l2_embeds = F.normalize(embeds, p=2, dim=-1)
        # l2_embeds.requires_grad = True      <==== uncomment this if you run into var has no gradient problem

        return l2_embeds

    def forward(self, embeds):
        l2_signal = self.regularize(embeds)
        return l2_signal


class AllTripletSelector:
    def get_triplets(self, embeddings, labels):
        triplets = []
        for label in set(labels.tolist()):
            pos = (labels == label).nonzero().flatten().tolist()
            neg = (labels != label).nonzero().flatten().tolist()
            for a, p in itertools.combinations(pos, 2):
                triplets += [[a, p, n] for n in neg]
        return torch.LongTensor(triplets)


class OnlineTripletLoss(LossNM):
    def __init__(self, margin, triplet_selector):
        super().__init__()
        self.margin = margin
        self.triplet_selector = triplet_selector

    def _loss(self, embeddings, target):
        embeddings = torch.flatten(embeddings, start_dim=-2)
        triplets = self.triplet_selector.get_triplets(embeddings, target)

        ap_distances = (embeddings[triplets[:, 0]] - embeddings[triplets[:, 1]]).pow(2).sum(1)  # .pow(.5)
        an_distances = (embeddings[triplets[:, 0]] - embeddings[triplets[:, 2]]).pow(2).sum(1)  # .pow(.5)
        losses = F.relu(ap_distances - an_distances + self.margin)

        return losses.mean()

    def _loss_function(self, **kwargs):
        return self._loss(*(kwargs.values()))


encoder = Res15Encoder()
l2_regularizer = L2Regularizer()
triplet_loss = OnlineTripletLoss(margin=0.5, triplet_selector=AllTripletSelector())
optimizer = torch.optim.Adam(encoder.parameters(), lr=1e-3)

for step in range(3):
    audio = torch.randn(8, 20, 16)  # MFCC features
    labels = torch.tensor([0, 0, 1, 1, 2, 2, 3, 3])
    embeds = encoder(audio_signal=audio)
    l2_embeds = l2_regularizer(embeds=embeds)
    loss = triplet_loss(embeds=l2_embeds, targets=labels)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(step, loss.item())
