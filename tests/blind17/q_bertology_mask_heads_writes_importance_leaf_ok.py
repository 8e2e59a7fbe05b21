# Source: https://github.com/huggingface/transformers/issues/3895
"""transformers' examples/bertology/run_bertology.py with --try_masking, fixed:
`compute_heads_importance` turned the caller's mask into a leaf requiring grad
(`head_mask.requires_grad_(True)`), and `mask_heads` then wrote the next heads to mask into it
(`new_head_mask.view(-1)[...] = 0.0`): a None `.grad` for the reporter on torch 1.4, "a view of a
leaf Variable that requires grad is being used in an in-place operation" on torch 2.13. The
thread's PR (#4479) adds `new_head_mask = new_head_mask.clone().detach()` after the write, which
torch 2.13 still refuses at the next write, since `compute_heads_importance` turns that copy into
a leaf requiring grad too; the fix here gives `compute_heads_importance` its own detached copy of
the mask it is passed, so the caller's mask never requires grad. A tiny BERT-like classifier with
per-head masks, GLUE accuracy and the eval loader as small stand-ins; random data labelled by the
model itself; the .npy saves, logging and the prune_heads timing are left out."""
import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class Config:
    def __init__(self, num_hidden_layers=2, num_attention_heads=4, hidden_size=16, vocab_size=50, num_labels=3):
        self.num_hidden_layers = num_hidden_layers
        self.num_attention_heads = num_attention_heads
        self.hidden_size = hidden_size
        self.vocab_size = vocab_size
        self.num_labels = num_labels


class SelfAttention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.h, self.d = config.num_attention_heads, config.hidden_size // config.num_attention_heads
        self.qkv = nn.Linear(config.hidden_size, 3 * config.hidden_size)
        self.out = nn.Linear(config.hidden_size, config.hidden_size)

    def forward(self, x, attention_mask, layer_head_mask):
        b, t, _ = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.h, self.d).permute(2, 0, 3, 1, 4)
        scores = q @ k.transpose(-1, -2) / self.d ** 0.5
        scores = scores + (1.0 - attention_mask[:, None, None, :]) * -10000.0
        probs = scores.softmax(-1)
        if layer_head_mask is not None:
            probs = probs * layer_head_mask.view(1, -1, 1, 1)
        ctx = (probs @ v).transpose(1, 2).reshape(b, t, -1)
        return torch.tanh(self.out(ctx)), probs


class TinyBertForSequenceClassification(nn.Module):
    """Stand-in for AutoModelForSequenceClassification with output_attentions=True."""

    def __init__(self, config):
        super().__init__()
        self.config = config
        self.embeddings = nn.Embedding(config.vocab_size, config.hidden_size)
        self.layers = nn.ModuleList([SelfAttention(config) for _ in range(config.num_hidden_layers)])
        self.classifier = nn.Linear(config.hidden_size, config.num_labels)

    def forward(self, input_ids, attention_mask, labels=None, head_mask=None):
        x = self.embeddings(input_ids)
        all_attentions = ()
        for i, layer in enumerate(self.layers):
            out, probs = layer(x, attention_mask, head_mask[i] if head_mask is not None else None)
            x = x + out
            all_attentions = all_attentions + (probs,)
        logits = self.classifier(x[:, 0])
        loss = F.cross_entropy(logits, labels)
        return loss, logits, all_attentions


def glue_compute_metrics(task_name, preds, labels):
    return {"acc": float((preds == labels).mean())}


def entropy(p):
    """ Compute the entropy of a probability distribution """
    plogp = p * torch.log(p)
    plogp[p == 0] = 0
    return -plogp.sum(dim=-1)


def compute_heads_importance(
    args, model, eval_dataloader, compute_entropy=True, compute_importance=True, head_mask=None
):
    n_layers, n_heads = model.config.num_hidden_layers, model.config.num_attention_heads
    head_importance = torch.zeros(n_layers, n_heads).to(args.device)
    attn_entropy = torch.zeros(n_layers, n_heads).to(args.device)

    if head_mask is None:
        head_mask = torch.ones(n_layers, n_heads).to(args.device)
    else:
        head_mask = head_mask.clone().detach()  # our own leaf: the caller keeps writing into its mask
    head_mask.requires_grad_(requires_grad=True)
    preds = None
    labels = None
    tot_tokens = 0.0

    for step, inputs in enumerate(eval_dataloader):
        for k, v in inputs.items():
            inputs[k] = v.to(args.device)

        # Do a forward pass (not with torch.no_grad() since we need gradients for importance score - see below)
        outputs = model(**inputs, head_mask=head_mask)
        loss, logits, all_attentions = (
            outputs[0],
            outputs[1],
            outputs[-1],
        )
        loss.backward()  # Backpropagate to populate the gradients in the head mask

        if compute_entropy:
            for layer, attn in enumerate(all_attentions):
                masked_entropy = entropy(attn.detach()) * inputs["attention_mask"].float().unsqueeze(1)
                attn_entropy[layer] += masked_entropy.sum(-1).sum(0).detach()

        if compute_importance:
            head_importance += head_mask.grad.abs().detach()

        if preds is None:
            preds = logits.detach().cpu().numpy()
            labels = inputs["labels"].detach().cpu().numpy()
        else:
            preds = np.append(preds, logits.detach().cpu().numpy(), axis=0)
            labels = np.append(labels, inputs["labels"].detach().cpu().numpy(), axis=0)

        tot_tokens += inputs["attention_mask"].float().detach().sum().data

    attn_entropy /= tot_tokens
    head_importance /= tot_tokens
    if not args.dont_normalize_importance_by_layer:
        exponent = 2
        norm_by_layer = torch.pow(torch.pow(head_importance, exponent).sum(-1), 1 / exponent)
        head_importance /= norm_by_layer.unsqueeze(-1) + 1e-20

    if not args.dont_normalize_global_importance:
        head_importance = (head_importance - head_importance.min()) / (head_importance.max() - head_importance.min())

    return attn_entropy, head_importance, preds, labels


def mask_heads(args, model, eval_dataloader):
    _, head_importance, preds, labels = compute_heads_importance(args, model, eval_dataloader, compute_entropy=False)
    preds = np.argmax(preds, axis=1) if args.output_mode == "classification" else np.squeeze(preds)
    original_score = glue_compute_metrics(args.task_name, preds, labels)[args.metric_name]
    print("Pruning: original score: %f, threshold: %f" % (original_score, original_score * args.masking_threshold))

    new_head_mask = torch.ones_like(head_importance)
    num_to_mask = max(1, int(new_head_mask.numel() * args.masking_amount))

    current_score = original_score
    while current_score >= original_score * args.masking_threshold:
        head_mask = new_head_mask.clone()  # save current head mask
        # heads from least important to most - keep only not-masked heads
        head_importance[head_mask == 0.0] = float("Inf")
        current_heads_to_mask = head_importance.view(-1).sort()[1]

        if len(current_heads_to_mask) <= num_to_mask:
            break

        # mask heads
        current_heads_to_mask = current_heads_to_mask[:num_to_mask]
        print("Heads to mask: %s" % str(current_heads_to_mask.tolist()))
        new_head_mask = new_head_mask.view(-1)
        new_head_mask[current_heads_to_mask] = 0.0
        new_head_mask = new_head_mask.view_as(head_mask)

        # Compute metric and head importance again
        _, head_importance, preds, labels = compute_heads_importance(
            args, model, eval_dataloader, compute_entropy=False, head_mask=new_head_mask
        )
        preds = np.argmax(preds, axis=1) if args.output_mode == "classification" else np.squeeze(preds)
        current_score = glue_compute_metrics(args.task_name, preds, labels)[args.metric_name]
        print("Masking: current score: %f, remaining heads %d" % (current_score, new_head_mask.sum()))

    print("Final head mask", head_mask.detach().cpu().numpy().tolist())
    return head_mask


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--task_name", default="mnli", type=str)
    parser.add_argument("--dont_normalize_importance_by_layer", action="store_true")
    parser.add_argument("--dont_normalize_global_importance", action="store_true")
    parser.add_argument("--try_masking", action="store_true")
    parser.add_argument("--masking_threshold", default=0.9, type=float)
    parser.add_argument("--masking_amount", default=0.125, type=float)
    parser.add_argument("--metric_name", default="acc", type=str)
    parser.add_argument("--batch_size", default=4, type=int)
    args = parser.parse_args(["--try_masking"])
    args.device = torch.device("cpu")
    args.output_mode = "classification"

    torch.manual_seed(42)
    config = Config()
    model = TinyBertForSequenceClassification(config)
    input_ids = torch.randint(0, config.vocab_size, (16, 8))
    attention_mask = torch.ones(16, 8)
    with torch.no_grad():  # labels the model gets right: a "fine-tuned" model for the stand-in
        labels = model(input_ids, attention_mask, labels=torch.zeros(16, dtype=torch.long))[1].argmax(-1)
    eval_dataloader = [{"input_ids": input_ids[i:i + args.batch_size], "attention_mask": attention_mask[i:i + args.batch_size],
                        "labels": labels[i:i + args.batch_size]} for i in range(0, 16, args.batch_size)]

    compute_heads_importance(args, model, eval_dataloader)
    if args.try_masking and args.masking_threshold > 0.0 and args.masking_threshold < 1.0:
        head_mask = mask_heads(args, model, eval_dataloader)


main()
