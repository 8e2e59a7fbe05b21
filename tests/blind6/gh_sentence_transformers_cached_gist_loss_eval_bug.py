# Source: https://github.com/huggingface/sentence-transformers/issues/2667
"""Sentence Transformers v3 pre-release, CachedGISTEmbedLoss with an `eval_dataset` (issue 2667):
the cached (GradCache) losses embed the mini-batches without grad, compute the loss on detached
embeddings that require grad and call `loss.backward()` inside the loss's forward to cache the
embedding gradients. The Trainer's prediction_step computes the evaluation loss under
`torch.no_grad()`, so that inner loss has no grad_fn and its backward fails ("element 0 of tensors
does not require grad and does not have a grad_fn"; PR 2668 computes the plain loss, without the
gradient cache, when `torch.is_grad_enabled()` is false). CachedGISTEmbedLoss (forward,
embed_minibatch_iter, calculate_loss_and_cache_gradients, _backward_hook; no RandContext, the
stand-in has no dropout) and the Trainer's training/prediction steps are the library's, trimmed; a
bag-of-embeddings encoder stands in for the SentenceTransformer and its guide model; random token
batches."""
import copy
from functools import partial

import torch
import torch.nn.functional as F
from torch import nn


class SentenceTransformer(nn.Module):
    def __init__(self, vocab_size=50, dim=16):
        super().__init__()
        self.embed = nn.EmbeddingBag(vocab_size, dim)
        self.dense = nn.Linear(dim, dim)

    def forward(self, features):
        return {"sentence_embedding": self.dense(self.embed(features["input_ids"]))}


def _backward_hook(grad_output, sentence_features, loss_obj):
    assert loss_obj.cache is not None
    with torch.enable_grad():
        for sentence_feature, grad in zip(sentence_features, loss_obj.cache):
            for (reps_mb, _), grad_mb in zip(
                loss_obj.embed_minibatch_iter(sentence_feature=sentence_feature, with_grad=True), grad
            ):
                surrogate = torch.dot(reps_mb.flatten(), grad_mb.flatten()) * grad_output
                surrogate.backward()


class CachedGISTEmbedLoss(nn.Module):
    def __init__(self, model, guide, temperature=0.01, mini_batch_size=2):
        super().__init__()
        self.model = model
        self.guide = guide
        self.temperature = temperature
        self.mini_batch_size = mini_batch_size
        self.cache = None

    def sim_matrix(self, embed1, embed2):
        return F.cosine_similarity(embed1.unsqueeze(1), embed2.unsqueeze(0), dim=-1)

    def embed_minibatch(self, sentence_feature, begin, end, with_grad):
        grad_context = torch.enable_grad if with_grad else torch.no_grad
        sentence_feature_minibatch = {k: v[begin:end] for k, v in sentence_feature.items()}
        with grad_context():
            reps = self.model(sentence_feature_minibatch)["sentence_embedding"]
        with torch.no_grad():
            guide_reps = self.guide(sentence_feature_minibatch)["sentence_embedding"]
        return reps, guide_reps

    def embed_minibatch_iter(self, sentence_feature, with_grad):
        input_ids = sentence_feature["input_ids"]
        bsz = input_ids.shape[0]
        for b in range(0, bsz, self.mini_batch_size):
            e = b + self.mini_batch_size
            yield self.embed_minibatch(sentence_feature, b, e, with_grad)

    def calculate_loss(self, reps, reps_guided):
        anchor, positive = torch.cat(reps[0]), torch.cat(reps[1])
        anchor_guide, positive_guide = torch.cat(reps_guided[0]), torch.cat(reps_guided[1])
        guided_ap_sim = self.sim_matrix(anchor_guide, positive_guide)
        ap_sim = self.sim_matrix(anchor, positive)
        guided_sim = guided_ap_sim.diagonal().view(-1, 1)
        ap_sim = ap_sim.masked_fill(guided_ap_sim > guided_sim, -torch.inf)
        scores = ap_sim / self.temperature
        labels = torch.arange(scores.size(0)).long()
        return F.cross_entropy(scores, labels)

    def calculate_loss_and_cache_gradients(self, reps, reps_guided):
        loss = self.calculate_loss(reps, reps_guided)
        loss.backward()  # expect: GG104
        loss = loss.detach().requires_grad_()
        self.cache = [[r.grad for r in rs] for rs in reps]
        return loss

    def forward(self, sentence_features, labels=None):
        reps = []
        reps_guided = []
        for sentence_feature in sentence_features:
            reps_mbs = []
            reps_guided_mbs = []
            for reps_mb, reps_guided_mb in self.embed_minibatch_iter(sentence_feature, with_grad=False):
                reps_mbs.append(reps_mb.detach().requires_grad_())
                reps_guided_mbs.append(reps_guided_mb.detach())
            reps.append(reps_mbs)
            reps_guided.append(reps_guided_mbs)

        loss = self.calculate_loss_and_cache_gradients(reps, reps_guided)
        loss.register_hook(partial(_backward_hook, sentence_features=sentence_features, loss_obj=self))
        return loss


class SentenceTransformerTrainer:
    def __init__(self, model, loss, train_dataset, eval_dataset, lr=2e-5):
        self.model = model
        self.loss = loss
        self.train_dataset = train_dataset
        self.eval_dataset = eval_dataset
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=lr)

    def compute_loss(self, inputs):
        return self.loss(inputs["features"], inputs.get("label"))

    def training_step(self, inputs):
        self.model.train()
        loss = self.compute_loss(inputs)
        loss.backward()
        return loss.detach()

    def prediction_step(self, inputs):
        with torch.no_grad():
            loss = self.compute_loss(inputs)
            loss = loss.mean().detach()
        return loss

    def evaluate(self):
        self.model.eval()
        losses = [self.prediction_step(inputs) for inputs in self.eval_dataset]
        return {"eval_loss": torch.stack(losses).mean().item()}

    def train(self, num_epochs=1):
        for epoch in range(num_epochs):
            for inputs in self.train_dataset:
                self.optimizer.zero_grad()
                loss = self.training_step(inputs)
                self.optimizer.step()
                print("train_loss", loss.item())
            print(self.evaluate())


def pair_batches(n, bsz=4, seq_len=5, vocab_size=50):
    return [{"features": [{"input_ids": torch.randint(0, vocab_size, (bsz, seq_len))},
                          {"input_ids": torch.randint(0, vocab_size, (bsz, seq_len))}]}
            for _ in range(n)]


model = SentenceTransformer()
guide = copy.deepcopy(model)
loss = CachedGISTEmbedLoss(model, guide, mini_batch_size=2)
trainer = SentenceTransformerTrainer(model, loss, pair_batches(2), pair_batches(1))
trainer.train(num_epochs=1)
