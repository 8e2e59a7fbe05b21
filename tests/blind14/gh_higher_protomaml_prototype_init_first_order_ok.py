# Source: https://github.com/facebookresearch/higher/pull/57
"""ProtoMAML on a BERT encoder with `higher`, with the maintainer's answer (higher issue 70: the error
comes from `track_higher_grads=False`): the inner loop runs with `track_higher_grads=True`, so each
`diffopt.step` takes its gradients with create_graph=True, which keeps the prototypes' graph
through the encoder for the query loss's backward (the meta-gradient then also flows through the
inner updates). BERT, its tokenizer and `higher` are small stand-ins written here.
"""
import contextlib
import random

import torch
from torch import nn, optim
from torch.func import functional_call
from torch.nn import functional as F


# ---- stand-in for the `higher` library ----
class _FunctionalModel:
    def __init__(self, module, params):
        self.module = module
        self.names = [n for n, _ in module.named_parameters()]
        self.params = list(params)

    def parameters(self):
        return iter(self.params)

    def update_params(self, params):
        self.params = list(params)

    def __getattr__(self, name):
        attr = getattr(self.module, name)
        if callable(attr):
            def call(*args, **kwargs):
                return functional_call(self.module, dict(zip(self.names, self.params)), args, kwargs)
            return call if name == "forward" else attr
        return attr

    def __call__(self, *args, **kwargs):
        return functional_call(self.module, dict(zip(self.names, self.params)), args, kwargs)


class DifferentiableSGD:
    def __init__(self, other, fmodel, track_higher_grads=True):
        self.lr = other.param_groups[0]["lr"]
        self._fmodel = fmodel
        self._track_higher_grads = track_higher_grads

    def step(self, loss):
        params = list(self._fmodel.parameters())
        all_grads = torch.autograd.grad(loss, params, create_graph=self._track_higher_grads,
                                        allow_unused=True)
        new_params = []
        for p, g in zip(params, all_grads):
            if g is None:
                new_params.append(p)
                continue
            new_p = p - self.lr * g
            if not self._track_higher_grads:
                new_p = new_p.detach().requires_grad_()
            new_params.append(new_p)
        self._fmodel.update_params(new_params)
        return new_params


class higher:
    @staticmethod
    @contextlib.contextmanager
    def innerloop_ctx(model, opt, copy_initial_weights=True, track_higher_grads=True):
        params = [p.detach().clone().requires_grad_() if copy_initial_weights else p
                  for p in model.parameters()]
        fmodel = _FunctionalModel(model, params)
        diffopt = DifferentiableSGD(opt, fmodel, track_higher_grads=track_higher_grads)
        yield fmodel, diffopt


# ---- the reporter's model ----
class TransformerModel(nn.Module):
    def __init__(self, max_length, device, vocab=50, hidden=48, out=12):
        super(TransformerModel, self).__init__()
        self.max_length = max_length
        self.device = device
        self.embeddings = nn.Embedding(vocab, hidden)          # stand-in for BertModel
        self.encoder_layer = nn.Linear(hidden, hidden)
        self.linear = nn.Linear(hidden, out)
        self.vocab = vocab
        self.to(self.device)

    def encode_text(self, text):
        """Stand-in for the BERT tokenizer: hash words into ids."""
        ids = [[hash(w) % self.vocab for w in sent.split()][:self.max_length] for sent in text]
        ids = [s + [0] * (self.max_length - len(s)) for s in ids]
        return torch.tensor(ids)

    def forward(self, input_ids):
        hidden = torch.tanh(self.encoder_layer(self.embeddings(input_ids)))
        return self.linear(hidden.mean(1))


def build_prototypes(data_repr, labels, n_classes):
    prototypes = torch.zeros(n_classes, data_repr.size(-1))
    for c in range(n_classes):
        prototypes[c] = data_repr[labels == c].mean(0)
    return prototypes


def make_episode(n_classes=3, n_per_class=2):
    words = ["bank", "river", "money", "loan", "water", "shore", "cash", "fish"]
    sents = [" ".join(random.choice(words) for _ in range(5)) for _ in range(n_classes * n_per_class)]
    labels = torch.arange(n_classes).repeat_interleave(n_per_class)
    return sents, labels


random.seed(0)
model = TransformerModel(max_length=6, device="cpu")
meta_optimizer = optim.AdamW(model.parameters(), lr=1e-3)
inner_optimizer = optim.SGD(model.parameters(), lr=1e-2)
n_classes, updates = 3, 3

for episode in range(2):
    support_text, support_labels = make_episode(n_classes)
    query_text, query_labels = make_episode(n_classes)
    support_ids = model.encode_text(support_text)
    query_ids = model.encode_text(query_text)

    meta_optimizer.zero_grad()
    support_repr = model(support_ids)
    prototypes = build_prototypes(support_repr, support_labels, n_classes)
    output_weight = 2 * prototypes
    output_bias = -prototypes.norm(dim=1) ** 2

    with higher.innerloop_ctx(model, inner_optimizer, copy_initial_weights=False,
                              track_higher_grads=True) as (fmodel, diffopt):
        for _ in range(updates):
            output = fmodel(support_ids)
            output = F.linear(output, output_weight, output_bias)
            loss = F.cross_entropy(output, support_labels)
            diffopt.step(loss)

        output = fmodel(query_ids)
        output = F.linear(output, output_weight, output_bias)
        query_loss = F.cross_entropy(output, query_labels)
        query_loss.backward()

    meta_optimizer.step()
