# Source: https://github.com/SmartDataAnalytics/PyKEEN/pull/65
"""PyKEEN 0.0.x's TransE and train_kge_model() as the pull request found them when moving to
PyTorch 1.1: TransE._compute_loss rewraps the positive and negative scores with torch.tensor(...)
before MarginRankingLoss, so the loss is computed from new leaf tensors without a graph and
loss.backward() in the training loop raises. The model, its embedding normalisation, the
corruption of triples and the batch loop follow the repository; the knowledge graph is random
mapped triples."""
import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim


class TransE(nn.Module):
    def __init__(self, num_entities, num_relations, embedding_dim, margin_loss, device):
        super(TransE, self).__init__()
        self.device = device
        self.num_entities = num_entities
        self.entity_embeddings = nn.Embedding(num_entities, embedding_dim)
        self.relation_embeddings = nn.Embedding(num_relations, embedding_dim)
        self.scoring_fct_norm = 1
        self.criterion = nn.MarginRankingLoss(margin=margin_loss, reduction='mean')

    def _compute_loss(self, positive_scores, negative_scores):
        y = np.repeat([-1], repeats=positive_scores.shape[0])
        y = torch.tensor(y, dtype=torch.float, device=self.device)

        # Scores for the psotive and negative triples
        positive_scores = torch.tensor(positive_scores, dtype=torch.float, device=self.device)
        negative_scores = torch.tensor(negative_scores, dtype=torch.float, device=self.device)

        loss = self.criterion(positive_scores, negative_scores, y)
        return loss

    def forward(self, batch_positives, batch_negatives):
        # Normalize embeddings of entities
        norms = torch.norm(self.entity_embeddings.weight, p=2, dim=1).data
        self.entity_embeddings.weight.data = self.entity_embeddings.weight.data.div(
            norms.view(self.num_entities, 1).expand_as(self.entity_embeddings.weight))

        positive_scores = self._score_triples(batch_positives)
        negative_scores = self._score_triples(batch_negatives)
        loss = self._compute_loss(positive_scores=positive_scores, negative_scores=negative_scores)
        return loss

    def _score_triples(self, triples):
        heads, relations, tails = self._get_triple_embeddings(triples)
        scores = self._compute_scores(h_embs=heads, r_embs=relations, t_embs=tails)
        return scores

    def _compute_scores(self, h_embs, r_embs, t_embs):
        # Add the vector element wise
        sum_res = h_embs + r_embs - t_embs
        distances = torch.norm(sum_res, dim=1, p=self.scoring_fct_norm).view(size=(-1,))
        return distances

    def _get_triple_embeddings(self, triples):
        heads = self.entity_embeddings(triples[:, 0:1]).view(-1, self.entity_embeddings.embedding_dim)
        relations = self.relation_embeddings(triples[:, 1:2]).view(-1, self.relation_embeddings.embedding_dim)
        tails = self.entity_embeddings(triples[:, 2:3]).view(-1, self.entity_embeddings.embedding_dim)
        return heads, relations, tails


def _split_list_in_batches(input_list, batch_size):
    return [input_list[i:i + batch_size] for i in range(0, len(input_list), batch_size)]


def train_kge_model(kge_model, all_entities, learning_rate, num_epochs, batch_size, pos_triples, device):
    kge_model = kge_model.to(device)
    optimizer = optim.SGD(kge_model.parameters(), lr=learning_rate)

    num_pos_triples = pos_triples.shape[0]
    num_entities = all_entities.shape[0]
    loss_per_epoch = []

    for epoch in range(num_epochs):
        indices = np.arange(num_pos_triples)
        np.random.shuffle(indices)
        pos_triples = pos_triples[indices]
        pos_batches = _split_list_in_batches(input_list=pos_triples, batch_size=batch_size)
        current_epoch_loss = 0.

        for i, pos_batch in enumerate(pos_batches):
            current_batch_size = len(pos_batch)
            batch_subjs = pos_batch[:, 0:1]
            batch_relations = pos_batch[:, 1:2]
            batch_objs = pos_batch[:, 2:3]

            num_subj_corrupt = len(pos_batch) // 2
            num_obj_corrupt = len(pos_batch) - num_subj_corrupt
            pos_batch = torch.tensor(pos_batch, dtype=torch.long, device=device)

            corrupted_subj_indices = np.random.choice(np.arange(0, num_entities), size=num_subj_corrupt)
            corrupted_subjects = np.reshape(all_entities[corrupted_subj_indices], (-1, 1))
            subject_based_corrupted_triples = np.concatenate(
                [corrupted_subjects, batch_relations[:num_subj_corrupt], batch_objs[:num_subj_corrupt]], axis=1)

            corrupted_obj_indices = np.random.choice(np.arange(0, num_entities), size=num_obj_corrupt)
            corrupted_objects = np.reshape(all_entities[corrupted_obj_indices], (-1, 1))
            object_based_corrupted_triples = np.concatenate(
                [batch_subjs[num_subj_corrupt:], batch_relations[num_subj_corrupt:], corrupted_objects], axis=1)

            neg_batch = np.concatenate([subject_based_corrupted_triples, object_based_corrupted_triples], axis=0)
            neg_batch = torch.tensor(neg_batch, dtype=torch.long, device=device)

            # Recall that torch *accumulates* gradients. Before passing in a
            # new instance, you need to zero out the gradients from the old instance
            optimizer.zero_grad()
            loss = kge_model(pos_batch, neg_batch)
            current_epoch_loss += (loss.item() * current_batch_size)

            loss.backward()  # expect: GG104
            optimizer.step()

        loss_per_epoch.append(current_epoch_loss / len(pos_triples))
    return kge_model, loss_per_epoch


if __name__ == '__main__':
    num_entities, num_relations = 20, 3
    all_entities = np.arange(num_entities)
    pos_triples = np.stack([np.random.randint(0, num_entities, 40), np.random.randint(0, num_relations, 40),
                            np.random.randint(0, num_entities, 40)], axis=1)
    device = torch.device('cpu')
    model = TransE(num_entities, num_relations, embedding_dim=8, margin_loss=1., device=device)
    model, losses = train_kge_model(model, all_entities, learning_rate=0.01, num_epochs=2, batch_size=16,
                                    pos_triples=pos_triples, device=device)
    print(losses)
