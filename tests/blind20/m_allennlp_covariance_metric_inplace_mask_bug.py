# Source: https://github.com/allenai/allennlp/commit/4b6f8d165115997c2319918f956fd1e38f40d583
"""AllenNLP ``Covariance`` metric, before commit 4b6f8d1 "Remove inplace modification in Covariance
(#1691)".

A token-level regression model (event factuality, as in the commit message's traceback) computes a
masked MSE loss from its predictions and the gold labels, and then updates its ``Covariance``
metric with the same tensors. ``Metric.unwrap_to_tensors`` returns ``x.detach().cpu()``: on CPU this
is a detached alias that shares storage *and* the version counter with the original tensor. The
metric then masks in place::

    predictions *= mask
    gold_labels *= mask

which bumps the version of the prediction and label tensors that ``mse_loss`` saved for backward.
The trainer's ``loss.backward()`` fails with "one of the variables needed for gradient computation
has been modified by an inplace operation".

Fix (the commit): ``predictions = predictions * mask`` and ``gold_labels = gold_labels * mask``.
"""
from typing import Dict, Optional

import torch
import torch.nn.functional as F

torch.manual_seed(0)


# ---- allennlp/training/metrics/metric.py -----------------------------------------------------

class Metric:
    def __call__(self, predictions, gold_labels, mask=None):
        raise NotImplementedError

    def get_metric(self, reset: bool):
        raise NotImplementedError

    def reset(self) -> None:
        raise NotImplementedError

    @staticmethod
    def unwrap_to_tensors(*tensors: torch.Tensor):
        """
        If you actually passed gradient-tracking Tensors to a Metric, there will be
        a huge memory leak, because it will prevent garbage collection for the computation
        graph. This method ensures that you're using tensors directly and that they are on
        the CPU.
        """
        return (x.detach().cpu() if isinstance(x, torch.Tensor) else x for x in tensors)


# ---- allennlp/training/metrics/covariance.py -------------------------------------------------

class Covariance(Metric):
    def __init__(self) -> None:
        self._total_prediction_mean = 0.0
        self._total_label_mean = 0.0
        self._total_co_moment = 0.0
        self._total_count = 0.0

    def __call__(self,
                 predictions: torch.Tensor,
                 gold_labels: torch.Tensor,
                 mask: Optional[torch.Tensor] = None):
        predictions, gold_labels, mask = self.unwrap_to_tensors(predictions, gold_labels, mask)
        # Flatten predictions, gold_labels, and mask. We calculate the covariance between
        # the vectors, since each element in the predictions and gold_labels tensor is assumed
        # to be a separate observation.
        predictions = predictions.view(-1)
        gold_labels = gold_labels.view(-1)

        if mask is not None:
            mask = mask.view(-1)
            predictions *= mask
            gold_labels *= mask
            num_batch_items = torch.sum(mask).item()
        else:
            num_batch_items = gold_labels.numel()

        previous_count = self._total_count
        updated_count = self._total_count + num_batch_items

        batch_mean_prediction = torch.sum(predictions) / num_batch_items
        delta_mean_prediction = ((batch_mean_prediction - self._total_prediction_mean) *
                                 num_batch_items) / updated_count
        previous_total_prediction_mean = self._total_prediction_mean
        self._total_prediction_mean += delta_mean_prediction.item()

        batch_mean_label = torch.sum(gold_labels) / num_batch_items
        delta_mean_label = ((batch_mean_label - self._total_label_mean) * num_batch_items) / updated_count
        previous_total_label_mean = self._total_label_mean
        self._total_label_mean += delta_mean_label.item()

        batch_coresiduals = (predictions - batch_mean_prediction) * (gold_labels - batch_mean_label)
        if mask is not None:
            batch_co_moment = torch.sum(batch_coresiduals * mask)
        else:
            batch_co_moment = torch.sum(batch_coresiduals)
        delta_co_moment = (
                batch_co_moment + (previous_total_prediction_mean - batch_mean_prediction) *
                (previous_total_label_mean - batch_mean_label) *
                (previous_count * num_batch_items / updated_count))
        self._total_co_moment += delta_co_moment.item()
        self._total_count = updated_count

    def get_metric(self, reset: bool = False):
        covariance = self._total_co_moment / (self._total_count - 1)
        if reset:
            self.reset()
        return covariance

    def reset(self):
        self._total_prediction_mean = 0.0
        self._total_label_mean = 0.0
        self._total_co_moment = 0.0
        self._total_count = 0.0


# ---- the user's model: token-level factuality regressor --------------------------------------

class Model(torch.nn.Module):
    def get_regularization_penalty(self):
        return 0.0

    def get_metrics(self, reset: bool = False) -> Dict[str, float]:
        return {}


class SelectiveRegressor(Model):
    def __init__(self, vocab_size=50, embedding_dim=16, hidden_dim=16):
        super().__init__()
        self._text_field_embedder = torch.nn.Embedding(vocab_size, embedding_dim)
        self._encoder = torch.nn.LSTM(embedding_dim, hidden_dim, batch_first=True, bidirectional=True)
        self._projection = torch.nn.Linear(2 * hidden_dim, 1)
        self.covariance = Covariance()

    def forward(self, tokens, label=None, label_mask=None):
        embedded_text = self._text_field_embedder(tokens)
        encoded_text, _ = self._encoder(embedded_text)
        predictions = self._projection(encoded_text).squeeze(-1)
        output_dict = {"prediction": predictions}
        if label is not None:
            token_losses = F.mse_loss(predictions, label, reduction="none")
            loss = (token_losses * label_mask).sum() / label_mask.sum()
            output_dict["loss"] = loss
            self.covariance(predictions, label, label_mask)
        return output_dict

    def get_metrics(self, reset: bool = False) -> Dict[str, float]:
        return {"covariance": self.covariance.get_metric(reset)}


# ---- allennlp/training/trainer.py, reduced ---------------------------------------------------

class Trainer:
    def __init__(self, model, optimizer, iterator, num_epochs=2):
        self._model = model
        self.optimizer = optimizer
        self.iterator = iterator
        self._num_epochs = num_epochs
        self._multiple_gpu = False

    def _batch_loss(self, batch, for_training: bool) -> torch.Tensor:
        output_dict = self._model(**batch)
        try:
            loss = output_dict["loss"]
            if for_training:
                loss += self._model.get_regularization_penalty()
        except KeyError:
            if for_training:
                raise RuntimeError("The model you are trying to optimize does not contain a"
                                   " 'loss' key in the output of model.forward(inputs).")
            loss = None
        return loss

    def _train_epoch(self, epoch: int) -> Dict[str, float]:
        train_loss = 0.0
        self._model.train()
        for batch in self.iterator:
            self.optimizer.zero_grad()
            loss = self._batch_loss(batch, for_training=True)
            loss.backward()  # expect: GG103
            train_loss += loss.item()
            self.optimizer.step()
        metrics = self._model.get_metrics(reset=True)
        metrics["loss"] = train_loss / len(self.iterator)
        return metrics

    def train(self):
        for epoch in range(self._num_epochs):
            train_metrics = self._train_epoch(epoch)
            print(epoch, train_metrics)


def make_batch(batch_size=3, seq_len=7):
    label_mask = (torch.rand(batch_size, seq_len) > 0.4).float()
    label_mask[:, 0] = 1.0
    return {
        "tokens": torch.randint(0, 50, (batch_size, seq_len)),
        "label": torch.empty(batch_size, seq_len).uniform_(-3, 3),
        "label_mask": label_mask,
    }


model = SelectiveRegressor()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
iterator = [make_batch() for _ in range(3)]
trainer = Trainer(model, optimizer, iterator)
trainer.train()
