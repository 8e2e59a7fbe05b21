# Source: https://github.com/pykeen/pykeen/issues/571
"""pykeen's CompGCN with the maintainers' fix (PR 573): CombinedCompGCNRepresentations.train()
invalidates the buffered enriched representations when the module switches from evaluation back
to training, since the early stopper filled them under no_grad. Epoch 2 then recomputes them with
gradient tracking. Pipeline, training loop, stopper, layer and interaction are small stand-ins.
"""
import itertools

import torch
import torch.nn as nn


class Embedding(nn.Module):
    def __init__(self, max_id, dim):
        super().__init__()
        self._embeddings = nn.Embedding(max_id, dim)

    def forward(self, indices=None):
        if indices is None:
            return self._embeddings.weight
        return self._embeddings(indices)


class CompGCNLayer(nn.Module):
    """Stand-in for pykeen.nn.emb.CompGCNLayer: composition 'mult', mean aggregation."""
    def __init__(self, input_dim, output_dim):
        super().__init__()
        self.w_in = nn.Linear(input_dim, output_dim, bias=False)
        self.w_self = nn.Linear(input_dim, output_dim, bias=False)
        self.w_rel = nn.Linear(input_dim, output_dim, bias=False)
        self.activation = nn.Tanh()

    def forward(self, x_e, x_r, edge_index, edge_type):
        source, target = edge_index
        messages = self.w_in(x_e[source] * x_r[edge_type])
        out = torch.zeros(x_e.shape[0], messages.shape[1]).index_add(0, target, messages)
        deg = torch.zeros(x_e.shape[0]).index_add(0, target, torch.ones(target.shape[0])).clamp(min=1.0)
        x_e = self.activation(out / deg.unsqueeze(-1) + self.w_self(x_e))
        return x_e, self.w_rel(x_r)


class CombinedCompGCNRepresentations(nn.Module):
    def __init__(self, triples_factory, embedding_dim=8, num_layers=1, dims=None):
        super().__init__()
        self.entity_representations = Embedding(triples_factory.num_entities, embedding_dim)
        self.relation_representations = Embedding(2 * triples_factory.real_num_relations, embedding_dim)
        input_dim = embedding_dim
        dims = dims or [embedding_dim] * num_layers
        self.output_dim = dims[-1]
        layers = []
        for input_dim_, output_dim in zip(itertools.chain([input_dim], dims), dims):
            layers.append(CompGCNLayer(input_dim=input_dim_, output_dim=output_dim))
        self.layers = nn.ModuleList(layers)
        self.register_buffer(name="edge_index", tensor=triples_factory.mapped_triples[:, [0, 2]].t())
        self.register_buffer(name="edge_type", tensor=triples_factory.mapped_triples[:, 1])
        # initialize buffer of enriched representations
        self.enriched_representations = None

    def post_parameter_update(self) -> None:
        # invalidate enriched embeddings
        self.enriched_representations = None

    def train(self, mode: bool = True):
        # when changing from evaluation to training mode, the buffered representations have been computed without
        # gradient tracking. hence, we need to invalidate them.
        if mode and not self.training:
            self.enriched_representations = None
        return super().train(mode=mode)

    def forward(self):
        """Compute enriched representations."""
        if self.enriched_representations is None:
            x_e = self.entity_representations()
            x_r = self.relation_representations()
            # enrich
            for layer in self.layers:
                x_e, x_r = layer(x_e=x_e, x_r=x_r, edge_index=self.edge_index, edge_type=self.edge_type)
            self.enriched_representations = (x_e, x_r)
        return self.enriched_representations

    def split(self):
        return SingleCompGCNRepresentation(self, position=0), SingleCompGCNRepresentation(self, position=1)


class SingleCompGCNRepresentation(nn.Module):
    def __init__(self, combined, position=0):
        super().__init__()
        self.combined = combined
        self.position = position

    def forward(self, indices=None):
        x = self.combined()[self.position]
        if indices is not None:
            x = x[indices]
        return x


class CompGCN(nn.Module):
    """ERModel stand-in: CompGCN encoder with a DistMult interaction."""
    def __init__(self, triples_factory, embedding_dim=8):
        super().__init__()
        combined = CombinedCompGCNRepresentations(triples_factory, embedding_dim=embedding_dim)
        self.entity_representation, self.relation_representation = combined.split()
        self.combined = combined

    def post_parameter_update(self):
        self.combined.post_parameter_update()

    def score_hrt(self, hrt_batch):
        h = self.entity_representation(hrt_batch[:, 0])
        r = self.relation_representation(hrt_batch[:, 1])
        t = self.entity_representation(hrt_batch[:, 2])
        return (h * r * t).sum(dim=-1, keepdim=True)

    def score_t(self, hr_batch):
        h = self.entity_representation(hr_batch[:, 0])
        r = self.relation_representation(hr_batch[:, 1])
        t = self.entity_representation()
        return (h * r) @ t.t()


class TriplesFactory:
    def __init__(self, num_entities, num_relations, num_triples, create_inverse_triples=True):
        g = torch.Generator().manual_seed(0)
        h = torch.randint(0, num_entities, (num_triples,), generator=g)
        r = torch.randint(0, num_relations, (num_triples,), generator=g)
        t = torch.randint(0, num_entities, (num_triples,), generator=g)
        triples = torch.stack([h, r, t], dim=1)
        if create_inverse_triples:
            triples = torch.cat([triples, torch.stack([t, r + num_relations, h], dim=1)])
        self.mapped_triples = triples
        self.num_entities = num_entities
        self.real_num_relations = num_relations


class EarlyStopper:
    def __init__(self, model, evaluation_triples, frequency=1, patience=2):
        self.model, self.evaluation_triples = model, evaluation_triples
        self.frequency, self.patience = frequency, patience
        self.results = []

    def should_evaluate(self, epoch):
        return epoch % self.frequency == 0

    def should_stop(self, epoch):
        self.model.eval()
        with torch.no_grad():
            scores = self.model.score_t(self.evaluation_triples[:, :2])
            true = scores.gather(1, self.evaluation_triples[:, 2:3])
            ranks = (scores > true).sum(dim=1) + 1
            mrr = (1.0 / ranks.float()).mean().item()
        self.results.append(mrr)
        return len(self.results) > self.patience and max(self.results[-self.patience:]) < max(self.results)


class SLCWATrainingLoop:
    def __init__(self, model, triples_factory, optimizer):
        self.model, self.triples_factory, self.optimizer = model, triples_factory, optimizer
        self.loss = nn.MarginRankingLoss(margin=1.0)

    def _process_batch(self, batch):
        negative = batch.clone()
        negative[:, 2] = torch.randint(0, self.triples_factory.num_entities, (batch.shape[0],))
        pos = self.model.score_hrt(batch)
        neg = self.model.score_hrt(negative)
        return self.loss(pos, neg, torch.ones_like(pos))

    def train(self, num_epochs, batch_size, stopper=None):
        triples = self.triples_factory.mapped_triples
        for epoch in range(1, num_epochs + 1):
            self.model.train()
            for start in range(0, triples.shape[0], batch_size):
                batch = triples[start:start + batch_size]
                self.optimizer.zero_grad()
                loss = self._process_batch(batch)
                loss.backward()
                self.optimizer.step()
                self.model.post_parameter_update()
            if stopper is not None and stopper.should_evaluate(epoch) and stopper.should_stop(epoch):
                break


def pipeline(training, validation, num_epochs, stopper_frequency):
    model = CompGCN(training)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    stopper = EarlyStopper(model, validation, frequency=stopper_frequency)
    SLCWATrainingLoop(model, training, optimizer).train(num_epochs=num_epochs, batch_size=16, stopper=stopper)
    return model


training = TriplesFactory(num_entities=14, num_relations=5, num_triples=40, create_inverse_triples=True)
validation = TriplesFactory(num_entities=14, num_relations=5, num_triples=8, create_inverse_triples=False).mapped_triples
result = pipeline(training, validation, num_epochs=2, stopper_frequency=1)
