# Source: https://github.com/OpenRLHF/OpenRLHF/pull/145
"""OpenRLHF's DPO training with the fix of PR 145: DPOLoss.forward returns `losses.mean()`, a
scalar, so strategy.backward's `loss.backward()` needs no explicit gradient. DPOLoss and DPOTrainer
are OpenRLHF's; a one-layer GRU language model stands in for the Actor, a minimal strategy for the
DeepSpeed strategy, and random token batches for the preference dataset."""
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F


class DPOLoss(nn.Module):
    """DPO Loss"""

    def __init__(self, beta: float = None) -> None:
        super().__init__()
        self.beta = beta

    def forward(self, policy_chosen_logps, policy_rejected_logps, reference_chosen_logps,
                reference_rejected_logps):
        pi_logratios = policy_chosen_logps - policy_rejected_logps
        ref_logratios = reference_chosen_logps - reference_rejected_logps

        logits = pi_logratios - ref_logratios
        losses = -F.logsigmoid(self.beta * logits)
        loss = losses.mean()
        chosen_rewards = self.beta * (policy_chosen_logps - reference_chosen_logps).detach()
        rejected_rewards = self.beta * (policy_rejected_logps - reference_rejected_logps).detach()

        return loss, chosen_rewards, rejected_rewards


class TinyActor(nn.Module):
    def __init__(self, vocab_size=50, hidden=32):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, hidden)
        self.rnn = nn.GRU(hidden, hidden, batch_first=True)
        self.lm_head = nn.Linear(hidden, vocab_size)

    def forward(self, input_ids, attention_mask=None, return_output=False):
        h, _ = self.rnn(self.embed(input_ids) * attention_mask.unsqueeze(-1))
        return {"logits": self.lm_head(h)}


class Tokenizer:
    pad_token_id = 0


class Strategy:
    def backward(self, loss, model, optimizer):
        loss.backward()

    def optimizer_step(self, optimizer, model, scheduler):
        optimizer.step()
        optimizer.zero_grad()
        scheduler.step()


class DPOTrainer:
    def __init__(self, model, ref_model, strategy, tokenizer, optim, train_dataloader, scheduler, beta=0.01,
                 max_epochs=1):
        self.model = model
        self.ref_model = ref_model
        self.strategy = strategy
        self.tokenizer = tokenizer
        self.optimizer = optim
        self.train_dataloader = train_dataloader
        self.scheduler = scheduler
        self.epochs = max_epochs
        self.beta = beta
        self.loss_fn = DPOLoss(self.beta)

    def fit(self):
        for epoch in range(self.epochs):
            self.model.train()
            self.ref_model.eval()
            acc_mean = 0
            loss_mean = 0
            for chosen_ids, c_mask, reject_ids, r_mask, _ in self.train_dataloader:
                chosen_ids = chosen_ids.squeeze(1)
                c_mask = c_mask.squeeze(1)
                reject_ids = reject_ids.squeeze(1)
                r_mask = r_mask.squeeze(1)

                chosen_logps, rejected_logps = self.concatenated_forward(
                    self.model, chosen_ids, c_mask, reject_ids, r_mask)
                with torch.no_grad():
                    reference_chosen_logps, reference_rejected_logps = self.concatenated_forward(
                        self.ref_model, chosen_ids, c_mask, reject_ids, r_mask)
                loss, chosen_reward, reject_reward = self.loss_fn(
                    chosen_logps, rejected_logps, reference_chosen_logps, reference_rejected_logps)

                self.strategy.backward(loss, self.model, self.optimizer)
                self.strategy.optimizer_step(self.optimizer, self.model, self.scheduler)

                acc_mean = acc_mean * 0.9 + 0.1 * (chosen_reward > reject_reward).float().mean().item()
                loss_mean = loss_mean * 0.9 + 0.1 * loss.item()
                print({"train_loss": loss.item(), "acc_mean": acc_mean, "loss_mean": loss_mean})

    def concatenated_forward(self, model, chosen_ids, c_mask, reject_ids, r_mask):
        input_ids, att_masks = self.concatenated_inputs(chosen_ids, c_mask, reject_ids, r_mask)
        all_logits = model(input_ids, attention_mask=att_masks, return_output=True)["logits"]
        all_logps = self._get_batch_logps(all_logits, input_ids, average_log_prob=False)
        chosen_logps = all_logps[: chosen_ids.shape[0]]
        rejected_logps = all_logps[chosen_ids.shape[0]:]
        return chosen_logps, rejected_logps

    def concatenated_inputs(self, chosen_ids, c_mask, reject_ids, r_mask):
        def pad_to_length(tensor, length, pad_value, dim=-1):
            if tensor.size(dim) >= length:
                return tensor
            else:
                pad_size = list(tensor.shape)
                pad_size[dim] = length - tensor.size(dim)
                return torch.cat(
                    [tensor, pad_value * torch.ones(*pad_size, dtype=tensor.dtype, device=tensor.device)], dim=dim)

        max_length = max(chosen_ids.shape[1], reject_ids.shape[1])
        inputs_ids = torch.cat((pad_to_length(chosen_ids, max_length, self.tokenizer.pad_token_id),
                                pad_to_length(reject_ids, max_length, self.tokenizer.pad_token_id)), dim=0)
        max_length = max(c_mask.shape[1], r_mask.shape[1])
        att_masks = torch.cat((pad_to_length(c_mask, max_length, 0), pad_to_length(r_mask, max_length, 0)), dim=0)
        return inputs_ids, att_masks

    def _get_batch_logps(self, logits, labels, average_log_prob=False):
        assert logits.shape[:-1] == labels.shape
        labels = labels[:, 1:].clone()
        logits = logits[:, :-1, :]
        loss_mask = labels != self.tokenizer.pad_token_id

        # dummy token; we'll ignore the losses on these tokens later
        labels[labels == self.tokenizer.pad_token_id] = 0
        per_token_logps = torch.gather(logits.log_softmax(-1), dim=2, index=labels.unsqueeze(2)).squeeze(2)

        if average_log_prob:
            return (per_token_logps * loss_mask).sum(-1) / loss_mask.sum(-1)
        else:
            return (per_token_logps * loss_mask).sum(-1)


def preference_batches(n_batches=2, batch_size=4, vocab_size=50):
    for _ in range(n_batches):
        chosen = torch.randint(1, vocab_size, (batch_size, 1, 10))
        reject = torch.randint(1, vocab_size, (batch_size, 1, 8))
        yield chosen, torch.ones_like(chosen), reject, torch.ones_like(reject), None


model = TinyActor()
ref_model = copy.deepcopy(model)
optim = torch.optim.Adam(model.parameters(), lr=5e-4)
scheduler = torch.optim.lr_scheduler.LambdaLR(optim, lambda step: 1.0)
trainer = DPOTrainer(model, ref_model, Strategy(), Tokenizer(), optim, list(preference_batches()), scheduler,
                     beta=0.1)
trainer.fit()
