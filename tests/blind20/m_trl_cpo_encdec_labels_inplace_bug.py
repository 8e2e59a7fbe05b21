# Source: https://github.com/huggingface/trl/commit/4d2c29291a8a8471b1846343130f0c3c9080ea26
"""TRL ``CPOTrainer`` with an encoder-decoder model, before commit 4d2c292 "fix gradient error of
inplace operation for enc-dec models".

``concatenated_forward`` computes the NLL term on the chosen half with
``cross_entropy_loss(all_logits[:len_chosen], labels[:len_chosen])`` where ``labels`` *is*
``concatenated_batch["concatenated_labels"]``; for an encoder-decoder model nothing is shifted, so
``nll_loss`` keeps a view of that very tensor as its target (NLL's backward saves the target). Then
``get_batch_logps`` is called with the same tensor and, again because the model is encoder-decoder
(no ``labels[:, 1:].clone()``), replaces the padding in place: ``labels[labels == label_pad_token_id]
= 0``. The target saved by the cross-entropy node has been modified, so the trainer's
``loss.backward()`` raises "one of the variables needed for gradient computation has been modified
by an inplace operation".

Fix (the commit): ``labels = concatenated_batch["concatenated_labels"].clone()`` before the NLL term.
"""
from contextlib import nullcontext
from typing import Dict, List, Optional, Union

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


def pad_to_length(tensor: torch.Tensor, length: int, pad_value: Union[int, float], dim: int = -1) -> torch.Tensor:
    if tensor.size(dim) >= length:
        return tensor
    else:
        pad_size = list(tensor.shape)
        pad_size[dim] = length - tensor.size(dim)
        return torch.cat(
            [
                tensor,
                pad_value * torch.ones(*pad_size, dtype=tensor.dtype, device=tensor.device),
            ],
            dim=dim,
        )


# ---- a tiny T5-like encoder-decoder (stand-in for AutoModelForSeq2SeqLM) ----------------------

class Seq2SeqLMOutput:
    def __init__(self, logits):
        self.logits = logits


class TinyT5(nn.Module):
    def __init__(self, vocab_size=20, d_model=16):
        super().__init__()
        self.shared = nn.Embedding(vocab_size, d_model)
        self.encoder = nn.GRU(d_model, d_model, batch_first=True)
        self.decoder = nn.GRU(d_model, d_model, batch_first=True)
        self.lm_head = nn.Linear(d_model, vocab_size, bias=False)

    def forward(self, input_ids, attention_mask=None, decoder_input_ids=None):
        enc = self.shared(input_ids) * attention_mask.unsqueeze(-1)
        _, h = self.encoder(enc)
        dec, _ = self.decoder(self.shared(decoder_input_ids), h)
        return Seq2SeqLMOutput(self.lm_head(dec))


# ---- trl/trainer/cpo_trainer.py ---------------------------------------------------------------

class CPOTrainer:
    def __init__(self, model, optimizer, beta=0.1, loss_type="sigmoid", label_smoothing=0.0,
                 label_pad_token_id=-100, padding_value=0, decoder_start_token_id=0, pad_token_id=0):
        self.model = model
        self.optimizer = optimizer
        self.beta = beta
        self.loss_type = loss_type
        self.label_smoothing = label_smoothing
        self.label_pad_token_id = label_pad_token_id
        self.padding_value = padding_value
        self.is_encoder_decoder = True
        self.decoder_start_token_id = decoder_start_token_id
        self.pad_token_id = pad_token_id
        self._peft_has_been_casted_to_bf16 = False
        self._stored_metrics = {"train": {}}

    @staticmethod
    def concatenated_inputs(
        batch: Dict[str, Union[List, torch.LongTensor]],
        is_encoder_decoder: bool = False,
        label_pad_token_id: int = -100,
        padding_value: int = 0,
        device: Optional[torch.device] = None,
    ) -> Dict[str, torch.LongTensor]:
        concatenated_batch = {}

        if is_encoder_decoder:
            max_length = max(batch["chosen_labels"].shape[1], batch["rejected_labels"].shape[1])
        else:
            max_length = max(batch["chosen_input_ids"].shape[1], batch["rejected_input_ids"].shape[1])

        for k in batch:
            if k.startswith("chosen") and isinstance(batch[k], torch.Tensor):
                if "labels" in k or is_encoder_decoder:
                    pad_value = label_pad_token_id
                elif k.endswith("_input_ids"):
                    pad_value = padding_value
                elif k.endswith("_attention_mask"):
                    pad_value = 0
                concatenated_key = k.replace("chosen", "concatenated")
                concatenated_batch[concatenated_key] = pad_to_length(batch[k], max_length, pad_value=pad_value)
        for k in batch:
            if k.startswith("rejected") and isinstance(batch[k], torch.Tensor):
                if "labels" in k or is_encoder_decoder:
                    pad_value = label_pad_token_id
                elif k.endswith("_input_ids"):
                    pad_value = padding_value
                elif k.endswith("_attention_mask"):
                    pad_value = 0
                concatenated_key = k.replace("rejected", "concatenated")
                concatenated_batch[concatenated_key] = torch.cat(
                    (
                        concatenated_batch[concatenated_key],
                        pad_to_length(batch[k], max_length, pad_value=pad_value),
                    ),
                    dim=0,
                ).to(device=device)

        if is_encoder_decoder:
            concatenated_batch["concatenated_input_ids"] = batch["prompt_input_ids"].repeat(2, 1).to(device=device)
            concatenated_batch["concatenated_attention_mask"] = (
                batch["prompt_attention_mask"].repeat(2, 1).to(device=device)
            )

        return concatenated_batch

    def cpo_loss(self, policy_chosen_logps, policy_rejected_logps):
        logits = policy_chosen_logps - policy_rejected_logps

        if self.loss_type == "sigmoid":
            losses = (
                -F.logsigmoid(self.beta * logits) * (1 - self.label_smoothing)
                - F.logsigmoid(-self.beta * logits) * self.label_smoothing
            )
        elif self.loss_type == "hinge":
            losses = torch.relu(1 - self.beta * logits)
        elif self.loss_type == "ipo":
            losses = (logits - 1 / (2 * self.beta)) ** 2
        else:
            raise ValueError(f"Unknown loss type: {self.loss_type}.")

        chosen_rewards = self.beta * (policy_chosen_logps).detach()
        rejected_rewards = self.beta * (policy_rejected_logps).detach()

        return losses, chosen_rewards, rejected_rewards

    @staticmethod
    def get_batch_logps(
        logits: torch.FloatTensor,
        labels: torch.LongTensor,
        average_log_prob: bool = False,
        label_pad_token_id: int = -100,
        is_encoder_decoder: bool = False,
    ) -> torch.FloatTensor:
        if logits.shape[:-1] != labels.shape:
            raise ValueError("Logits (batch and sequence length dim) and labels must have the same shape.")

        if not is_encoder_decoder:
            labels = labels[:, 1:].clone()
            logits = logits[:, :-1, :]
        loss_mask = labels != label_pad_token_id

        # dummy token; we'll ignore the losses on these tokens later
        labels[labels == label_pad_token_id] = 0

        per_token_logps = torch.gather(logits.log_softmax(-1), dim=2, index=labels.unsqueeze(2)).squeeze(2)

        if average_log_prob:
            return (per_token_logps * loss_mask).sum(-1) / loss_mask.sum(-1)
        else:
            return (per_token_logps * loss_mask).sum(-1)

    def concatenated_forward(self, model, batch):
        concatenated_batch = self.concatenated_inputs(
            batch,
            is_encoder_decoder=self.is_encoder_decoder,
            label_pad_token_id=self.label_pad_token_id,
            padding_value=self.padding_value,
        )
        len_chosen = batch["chosen_labels"].shape[0]

        model_kwargs = (
            {
                "decoder_input_ids": self._shift_right(concatenated_batch["concatenated_labels"]),
            }
            if self.is_encoder_decoder
            else {}
        )

        outputs = model(
            concatenated_batch["concatenated_input_ids"],
            attention_mask=concatenated_batch["concatenated_attention_mask"],
            **model_kwargs,
        )
        all_logits = outputs.logits

        def cross_entropy_loss(logits, labels):
            if not self.is_encoder_decoder:
                # Shift so that tokens < n predict n
                logits = logits[..., :-1, :].contiguous()
                labels = labels[..., 1:].contiguous()
            # Flatten the tokens
            loss_fct = nn.CrossEntropyLoss()
            logits = logits.view(-1, logits.shape[-1])
            labels = labels.view(-1)
            # Enable model parallelism
            labels = labels.to(logits.device)
            loss = loss_fct(logits, labels)
            return loss

        labels = concatenated_batch["concatenated_labels"]
        nll_loss = cross_entropy_loss(all_logits[:len_chosen], labels[:len_chosen])

        all_logps = self.get_batch_logps(
            all_logits,
            concatenated_batch["concatenated_labels"],
            average_log_prob=self.loss_type == "ipo",
            is_encoder_decoder=self.is_encoder_decoder,
            label_pad_token_id=self.label_pad_token_id,
        )

        chosen_logps = all_logps[:len_chosen]
        rejected_logps = all_logps[len_chosen:]

        chosen_logits = all_logits[:len_chosen]
        rejected_logits = all_logits[len_chosen:]

        return (chosen_logps, rejected_logps, chosen_logits, rejected_logits, nll_loss)

    def get_batch_loss_metrics(self, model, batch, train_eval="train"):
        metrics = {}

        (
            policy_chosen_logps,
            policy_rejected_logps,
            policy_chosen_logits,
            policy_rejected_logits,
            policy_nll_loss,
        ) = self.concatenated_forward(model, batch)

        losses, chosen_rewards, rejected_rewards = self.cpo_loss(
            policy_chosen_logps,
            policy_rejected_logps,
        )

        loss = losses.mean() + policy_nll_loss
        reward_accuracies = (chosen_rewards > rejected_rewards).float()

        prefix = "eval_" if train_eval == "eval" else ""
        metrics[f"{prefix}rewards/chosen"] = chosen_rewards.mean().cpu()
        metrics[f"{prefix}rewards/rejected"] = rejected_rewards.mean().cpu()
        metrics[f"{prefix}rewards/accuracies"] = reward_accuracies.mean().cpu()
        metrics[f"{prefix}rewards/margins"] = (chosen_rewards - rejected_rewards).mean().cpu()
        metrics[f"{prefix}logps/rejected"] = policy_rejected_logps.detach().mean().cpu()
        metrics[f"{prefix}logps/chosen"] = policy_chosen_logps.detach().mean().cpu()
        metrics[f"{prefix}nll_loss"] = policy_nll_loss.detach().cpu().mean()

        return loss, metrics

    def compute_loss(self, model, inputs, return_outputs=False):
        compute_loss_context_manager = torch.cuda.amp.autocast if self._peft_has_been_casted_to_bf16 else nullcontext

        with compute_loss_context_manager():
            loss, metrics = self.get_batch_loss_metrics(model, inputs, train_eval="train")

        # force log the metrics
        self.store_metrics(metrics, train_eval="train")

        if return_outputs:
            return (loss, metrics)
        return loss

    def store_metrics(self, metrics, train_eval="train"):
        for key, value in metrics.items():
            self._stored_metrics[train_eval].setdefault(key, []).append(value)

    def _shift_right(self, input_ids):
        shifted_input_ids = input_ids.new_zeros(input_ids.shape)
        shifted_input_ids[..., 1:] = input_ids[..., :-1].clone()
        shifted_input_ids[..., 0] = self.decoder_start_token_id
        # replace possible -100 values in labels by `pad_token_id`
        shifted_input_ids.masked_fill_(shifted_input_ids == -100, self.pad_token_id)
        return shifted_input_ids

    # transformers.Trainer.training_step / train, reduced
    def training_step(self, model, inputs):
        model.train()
        loss = self.compute_loss(model, inputs)
        loss.backward()  # expect: GG103
        return loss.detach()

    def train(self, train_dataloader, num_train_epochs=1):
        for epoch in range(num_train_epochs):
            for step, inputs in enumerate(train_dataloader):
                tr_loss_step = self.training_step(self.model, inputs)
                self.optimizer.step()
                self.optimizer.zero_grad()
                print(epoch, step, tr_loss_step.item())


def make_batch(bsz=2):
    # DPODataCollatorWithPadding output for an encoder-decoder model: labels padded with -100
    return {
        "prompt_input_ids": torch.randint(1, 20, (bsz, 6)),
        "prompt_attention_mask": torch.ones(bsz, 6, dtype=torch.long),
        "chosen_labels": torch.cat([torch.randint(1, 20, (bsz, 4)), torch.full((bsz, 1), -100)], dim=1),
        "rejected_labels": torch.randint(1, 20, (bsz, 3)),
    }


model = TinyT5()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
trainer = CPOTrainer(model, optimizer)
train_dataloader = [make_batch() for _ in range(2)]
trainer.train(train_dataloader)
