"""Deterministic generator of a synthetic-but-realistic corpus of PyTorch training scripts.

Used by ``bench/engine_throughput.py``.  Given a seed, ``generate_corpus`` always writes the
same files (the per-file random generators are seeded from ``"{seed}:{index}"``, which
``random.Random`` hashes deterministically, independent of ``PYTHONHASHSEED``).

The corpus mixes:

* classifier / regression training scripts: aliased imports, ``Dataset`` subclasses,
  ``DataLoader``, ``nn.Module`` subclasses, factory functions, optimizers, schedulers,
  nested train loops, ``with torch.no_grad()`` validation, logging dicts, argparse ``main()``;
* GAN scripts (generator / discriminator, ``fake.detach()``);
* recurrent language-model scripts (hidden state carried between batches);
* manual-gradient scripts (``requires_grad=True`` leaves updated under ``no_grad``);
* plain Python utility modules with no torch at all;
* planted bugs, recorded in ``CorpusFile.planted``: a tensor built from parameters outside the
  loop and reused inside it, a recurrent hidden state carried without ``detach()``, a GAN
  discriminator step without ``detach()`` followed by the generator step, and a second
  ``backward()`` over the same loss.  Each of these raises "Trying to backward through the graph
  a second time" when run.

Every file gets padding helpers (comprehensions, try/except, small classes, generators) until
it reaches a target length drawn from 100..600 lines.
"""
from __future__ import annotations

import ast
import random
from dataclasses import dataclass
from pathlib import Path
from string import Template
from textwrap import dedent

__all__ = ["CorpusFile", "generate_corpus", "generate_file", "KINDS"]


@dataclass(frozen=True)
class CorpusFile:
    path: Path
    kind: str
    lines: int
    planted: tuple[str, ...]  # names of planted bugs ("" tuple when the file is correct)


# kind -> weight
KINDS = {
    "classifier": 26,
    "cnn": 12,
    "regression": 10,
    "manual": 10,
    "gan": 9,
    "rnn": 11,
    "attention": 6,
    "utils": 10,
    "data": 6,
}

_PREFIX = ["Simple", "Deep", "Small", "Wide", "Residual", "Gated", "Dense", "Light", "Tiny", "Stacked"]
_MODEL = ["Net", "Classifier", "Encoder", "MLP", "Regressor", "Tagger", "Scorer", "Predictor", "Model"]
_DATA = ["Synthetic", "Toy", "Random", "Spiral", "Moons", "Blob", "Sine", "Digits", "Noisy", "Shifted"]
_WORDS = ["alpha", "beta", "gamma", "delta", "sigma", "omega", "kappa", "theta", "lambda_",
          "rho", "tau", "phi", "psi", "zeta", "eta", "mu", "nu", "xi"]
_NOUNS = ["record", "entry", "item", "row", "sample", "token", "chunk", "block", "frame",
          "segment", "batch", "shard", "window", "span", "cell", "node", "edge", "path"]
_VERBS = ["parse", "load", "normalize", "merge", "split", "filter", "collect", "format",
          "render", "encode", "decode", "summarize", "validate", "resolve", "group", "rank",
          "flatten", "dedupe", "index", "score"]


def _t(text: str, **kw) -> list[str]:
    """Dedent a ``$name`` template, substitute, and return its lines."""
    return Template(dedent(text).strip("\n")).substitute(**kw).split("\n")


def _ind(lines: list[str], n: int) -> list[str]:
    return [(" " * n + ln) if ln.strip() else "" for ln in lines]


class _FileGen:
    """Builds one file.  All randomness comes from ``self.r``."""

    def __init__(self, rng: random.Random, index: int, kind: str):
        self.r = rng
        self.index = index
        self.kind = kind
        self.planted: list[str] = []
        self.used_names: set[str] = set()
        r = rng
        # import style
        self.nn = r.choice(["nn", "nn", "torch.nn"])
        self.F = r.choice(["F", "F", "F", "functional", None])
        self.optim = r.choice(["optim", "torch.optim", "optim"])
        self.np = r.random() < 0.5
        self.x = r.choice(["x", "inputs", "batch_x", "features", "xb"])
        self.y = r.choice(["y", "labels", "targets", "batch_y", "yb"])
        self.model = r.choice(["model", "net", "clf", "network"])
        self.opt = r.choice(["optimizer", "opt", "optim_"])
        self.crit = r.choice(["criterion", "loss_fn", "objective"])
        self.sched = r.choice(["scheduler", "lr_sched", "sched"])
        self.loader = r.choice(["loader", "train_loader", "dl"])
        self.device = r.choice(["device", "dev"])
        self.model_cls = r.choice(_PREFIX) + r.choice(_MODEL)
        self.data_cls = r.choice(_DATA) + "Dataset"
        self.in_dim = r.choice([8, 16, 20, 32, 64, 100])
        self.hidden = r.choice([32, 64, 128, 256])
        self.classes = r.choice([2, 3, 5, 10])
        self.lr = r.choice(["1e-3", "3e-4", "0.01", "0.1", "5e-4"])
        self.epochs = r.choice([2, 3, 5, 10])
        self.batch = r.choice([16, 32, 64, 128])

    # ------------------------------------------------------------------ helpers
    def fresh(self, base: str) -> str:
        name = base
        n = 2
        while name in self.used_names:
            name = f"{base}_{n}"
            n += 1
        self.used_names.add(name)
        return name

    def act(self, arg: str) -> str:
        fn = self.r.choice(["relu", "relu", "gelu", "tanh", "sigmoid", "silu", "leaky_relu"])
        if self.F is None:
            if fn in ("relu", "tanh", "sigmoid"):
                return f"torch.{fn}({arg})"
            return f"{arg}.relu()"
        return f"{self.F}.{fn}({arg})"

    def act_module(self) -> str:
        return f"{self.nn}.{self.r.choice(['ReLU', 'ReLU', 'GELU', 'Tanh', 'SiLU', 'LeakyReLU'])}()"

    # ------------------------------------------------------------------ header
    def header(self, torch_file: bool = True) -> list[str]:
        r = self.r
        title = {
            "classifier": "Train a small classifier on synthetic data.",
            "cnn": "Convolutional classifier on random images.",
            "regression": "Fit a regression network.",
            "manual": "Gradient descent written out by hand.",
            "gan": "A tiny GAN on a 2-D mixture of Gaussians.",
            "rnn": "Character-level recurrent language model.",
            "attention": "Self-attention encoder on token sequences.",
            "utils": "Assorted helpers shared by the experiment scripts.",
            "data": "Data preparation utilities.",
        }[self.kind]
        out = ['"""' + title, "", f"Experiment {self.index:04d}; generated for benchmarking.", '"""']
        std = ["import argparse", "import json", "import logging", "import math", "import os",
               "import random", "import sys", "import time"]
        extra = ["import re", "import itertools", "import functools", "import shutil", "import csv",
                 "import copy", "import warnings"]
        r.shuffle(extra)
        out += sorted(std + extra[: r.randint(0, 3)])
        out.append("from collections import defaultdict" + r.choice(["", ", OrderedDict", ", Counter"]))
        if r.random() < 0.5:
            out.append("from dataclasses import dataclass, field")
        if r.random() < 0.5:
            out.append("from pathlib import Path")
        out.append("from typing import Any, Dict, Iterable, List, Optional, Tuple")
        out.append("")
        if self.np or not torch_file:
            out.append("import numpy as np")
        if torch_file:
            out.append("import torch")
            if self.nn == "nn":
                out.append(r.choice(["import torch.nn as nn", "from torch import nn"]))
            if self.F == "F":
                out.append("import torch.nn.functional as F")
            elif self.F == "functional":
                out.append("from torch.nn import functional")
            if self.optim == "optim":
                out.append(r.choice(["import torch.optim as optim", "from torch import optim"]))
            out.append("from torch.utils.data import DataLoader, Dataset")
        out.append("")
        out.append("logger = logging.getLogger(__name__)")
        out += ["", ""]
        return out

    def config_block(self) -> list[str]:
        if self.r.random() < 0.5:
            return _t('''
                DEFAULTS = {
                    "lr": $lr,
                    "epochs": $epochs,
                    "batch_size": $batch,
                    "hidden": $hidden,
                    "weight_decay": $wd,
                    "seed": $seed,
                    "log_every": $log_every,
                }
            ''', lr=self.lr, epochs=self.epochs, batch=self.batch, hidden=self.hidden,
                wd=self.r.choice(["0.0", "1e-4", "5e-5"]), seed=self.r.randint(0, 9999),
                log_every=self.r.choice([10, 20, 50])) + [""]
        return _t('''
            class Config:
                """Hyper-parameters; overridden from the command line."""

                def __init__(self, **overrides):
                    self.lr = $lr
                    self.epochs = $epochs
                    self.batch_size = $batch
                    self.hidden = $hidden
                    self.seed = $seed
                    self.log_every = $log_every
                    for key, value in overrides.items():
                        if not hasattr(self, key):
                            raise KeyError(f"unknown option {key!r}")
                        setattr(self, key, value)

                def as_dict(self):
                    return {k: v for k, v in vars(self).items() if not k.startswith("_")}

                def __repr__(self):
                    items = ", ".join(f"{k}={v!r}" for k, v in sorted(self.as_dict().items()))
                    return f"Config({items})"
        ''', lr=self.lr, epochs=self.epochs, batch=self.batch, hidden=self.hidden,
             seed=self.r.randint(0, 9999), log_every=self.r.choice([10, 20, 50])) + ["", ""]

    def seed_fn(self) -> list[str]:
        out = ["def set_seed(seed: int) -> None:", "    random.seed(seed)"]
        if self.np:
            out.append("    np.random.seed(seed)")
        out.append("    torch.manual_seed(seed)")
        if self.r.random() < 0.5:
            out += ["    if torch.cuda.is_available():", "        torch.cuda.manual_seed_all(seed)"]
        return out + ["", ""]

    # ------------------------------------------------------------------ data
    def dataset_class(self) -> list[str]:
        style = self.r.choice(["gauss", "spiral", "linear"])
        if style == "gauss":
            body = _t('''
                centers = torch.randn(num_classes, dim) * $spread
                self.labels = torch.randint(0, num_classes, (n,))
                self.features = centers[self.labels] + torch.randn(n, dim) * noise
            ''', spread=self.r.choice(["2.0", "3.0", "1.5"]))
        elif style == "spiral":
            body = _t('''
                t = torch.linspace(0, 4 * math.pi, n)
                self.labels = torch.randint(0, num_classes, (n,))
                angle = t + self.labels.float() * (2 * math.pi / num_classes)
                base = torch.stack([t * torch.cos(angle), t * torch.sin(angle)], dim=1)
                pad = torch.randn(n, dim - 2) * noise if dim > 2 else torch.zeros(n, 0)
                self.features = torch.cat([base, pad], dim=1)
            ''')
        else:
            body = _t('''
                w = torch.randn(dim, num_classes)
                self.features = torch.randn(n, dim)
                logits = self.features @ w + noise * torch.randn(n, num_classes)
                self.labels = logits.argmax(dim=1)
            ''')
        out = _t('''
            class $cls(Dataset):
                """$n_desc samples in `dim` dimensions with integer labels."""

                def __init__(self, n: int = $n, dim: int = $dim, num_classes: int = $k, noise: float = $noise):
                    super().__init__()
                    self.n = n
                    self.dim = dim
                    self.num_classes = num_classes
        ''', cls=self.data_cls, n_desc="Synthetic", n=self.r.choice([512, 1000, 2048, 4096]),
            dim=self.in_dim, k=self.classes, noise=self.r.choice(["0.1", "0.25", "0.5"]))
        out += _ind(body, 8)
        out += [""] + _ind(_t('''
                def __len__(self) -> int:
                    return self.n

                def __getitem__(self, idx):
                    if idx < 0 or idx >= self.n:
                        raise IndexError(idx)
                    return self.features[idx], self.labels[idx]

                def class_counts(self) -> Dict[int, int]:
                    counts: Dict[int, int] = {}
                    for label in self.labels.tolist():
                        counts[label] = counts.get(label, 0) + 1
                    return counts
        '''), 4)
        return out + ["", ""]

    def loaders_fn(self) -> list[str]:
        return _t('''
            def make_loaders(batch_size: int, val_fraction: float = 0.2):
                full = $cls()
                n_val = int(len(full) * val_fraction)
                n_train = len(full) - n_val
                train_set, val_set = torch.utils.data.random_split(full, [n_train, n_val])
                train_loader = DataLoader(train_set, batch_size=batch_size, shuffle=True, drop_last=$drop)
                val_loader = DataLoader(val_set, batch_size=batch_size * 2, shuffle=False)
                return train_loader, val_loader
        ''', cls=self.data_cls, drop=self.r.choice(["True", "False"])) + ["", ""]

    # ------------------------------------------------------------------ models
    def mlp_class(self, name: str | None = None, out_dim: str = "num_classes") -> list[str]:
        nn_ = self.nn
        name = name or self.model_cls
        depth = self.r.randint(1, 4)
        if self.r.random() < 0.5:
            layers = [f"{nn_}.Linear(in_dim, hidden)", self.act_module()]
            for _ in range(depth - 1):
                layers += [f"{nn_}.Linear(hidden, hidden)", self.act_module()]
                if self.r.random() < 0.3:
                    layers.append(f"{nn_}.Dropout(p=dropout)")
            layers.append(f"{nn_}.Linear(hidden, {out_dim})")
            body = [f"self.net = {nn_}.Sequential("] + [f"    {l}," for l in layers] + [")"]
            fwd = ["return self.net(x)"]
        else:
            body = [f"self.inp = {nn_}.Linear(in_dim, hidden)",
                    f"self.blocks = {nn_}.ModuleList([{nn_}.Linear(hidden, hidden) for _ in range({depth})])",
                    f"self.norm = {nn_}.LayerNorm(hidden)",
                    f"self.drop = {nn_}.Dropout(dropout)",
                    f"self.out = {nn_}.Linear(hidden, {out_dim})"]
            fwd = [f"h = {self.act('self.inp(x)')}",
                   "for block in self.blocks:",
                   f"    h = h + self.drop({self.act('block(h)')})" if self.r.random() < 0.6
                   else f"    h = self.drop({self.act('block(h)')})",
                   "h = self.norm(h)",
                   "return self.out(h)"]
        out = [f"class {name}({nn_}.Module):",
               f'    """Feed-forward network with {depth} hidden layer(s)."""',
               "",
               f"    def __init__(self, in_dim: int = {self.in_dim}, hidden: int = {self.hidden}, "
               f"{out_dim}: int = {self.classes if out_dim == 'num_classes' else 1}, dropout: float = 0.1):",
               "        super().__init__()"]
        out += _ind(body, 8)
        out += ["", "    def forward(self, x):"] + _ind(fwd, 8)
        if self.r.random() < 0.5:
            out += ["", "    def num_parameters(self) -> int:",
                    "        return sum(p.numel() for p in self.parameters() if p.requires_grad)"]
        return out + ["", ""]

    def cnn_class(self) -> list[str]:
        nn_ = self.nn
        ch = self.r.choice([8, 16, 32])
        return _t('''
            class ConvBlock($nn.Module):
                def __init__(self, cin: int, cout: int, pool: bool = True):
                    super().__init__()
                    self.conv = $nn.Conv2d(cin, cout, kernel_size=3, padding=1)
                    self.bn = $nn.BatchNorm2d(cout)
                    self.pool = $nn.MaxPool2d(2) if pool else $nn.Identity()

                def forward(self, x):
                    return self.pool($act)


            class $cls($nn.Module):
                def __init__(self, channels: int = 3, num_classes: int = $k, width: int = $ch):
                    super().__init__()
                    self.features = $nn.Sequential(
                        ConvBlock(channels, width),
                        ConvBlock(width, width * 2),
                        ConvBlock(width * 2, width * 4, pool=False),
                    )
                    self.head = $nn.Sequential($nn.Flatten(), $nn.Linear(width * 4 * 8 * 8, num_classes))

                def forward(self, images):
                    feats = self.features(images)
                    return self.head(feats)
        ''', nn=nn_, act=self.act("self.bn(self.conv(x))"), cls=self.model_cls, k=self.classes,
            ch=ch) + ["", ""]

    def image_dataset(self) -> list[str]:
        return _t('''
            class $cls(Dataset):
                def __init__(self, n: int = $n, size: int = 32, num_classes: int = $k):
                    self.images = torch.rand(n, 3, size, size)
                    self.labels = torch.randint(0, num_classes, (n,))
                    self.transform = None

                def __len__(self):
                    return len(self.labels)

                def __getitem__(self, i):
                    img = self.images[i]
                    if self.transform is not None:
                        img = self.transform(img)
                    return img, self.labels[i]
        ''', cls=self.data_cls, n=self.r.choice([256, 512, 1024]), k=self.classes) + ["", ""]

    def factory_fn(self, classes: list[str]) -> list[str]:
        entries = "\n".join(f'    "{c.lower()}": {c},' for c in classes)
        return (["MODEL_REGISTRY = {"] + entries.split("\n") + ["}", "", ""] + _t('''
            def build_model(name: str, **kwargs):
                try:
                    cls = MODEL_REGISTRY[name.lower()]
                except KeyError:
                    known = ", ".join(sorted(MODEL_REGISTRY))
                    raise ValueError(f"unknown model {name!r}; choose one of {known}") from None
                return cls(**kwargs)


            def build_optimizer(params, kind: str = "adam", lr: float = $lr, weight_decay: float = 0.0):
                if kind == "sgd":
                    return $optim.SGD(params, lr=lr, momentum=0.9, weight_decay=weight_decay)
                if kind == "adamw":
                    return $optim.AdamW(params, lr=lr, weight_decay=weight_decay)
                return $optim.Adam(params, lr=lr, weight_decay=weight_decay)
        ''', lr=self.lr, optim=self.optim) + ["", ""])

    # ------------------------------------------------------------------ training
    def train_fn(self, planted_target: bool = False, double_backward: bool = False) -> list[str]:
        m, o, c, x, y = self.model, self.opt, self.crit, self.x, self.y
        lines = [f"def train_one_epoch({m}, {self.loader}, {o}, {c}, {self.device}, epoch: int = 0, log_every: int = 20):",
                 f"    {m}.train()",
                 "    running = 0.0",
                 "    correct = 0",
                 "    seen = 0",
                 "    stats = defaultdict(list)"]
        if planted_target:
            self.planted.append("target-outside-loop")
            lines += [f"    anchor = next(iter({self.loader}))[0].to({self.device})",
                      f"    reference = {m}(anchor).mean()  # built once, reused every step"]
        lines += [f"    for step, ({x}, {y}) in enumerate({self.loader}):",
                  f"        {x} = {x}.to({self.device})",
                  f"        {y} = {y}.to({self.device})",
                  f"        {o}.zero_grad()",
                  f"        logits = {m}({x})",
                  f"        loss = {c}(logits, {y})"]
        if planted_target:
            lines.append("        loss = loss + 0.01 * (logits.mean() - reference) ** 2")
        elif self.r.random() < 0.3:
            lines.append(f"        loss = loss + 1e-4 * sum(p.pow(2).sum() for p in {m}.parameters())")
        lines.append("        loss.backward()")
        if double_backward:
            self.planted.append("double-backward")
            lines.append("        loss.backward()  # accidentally repeated")
        if self.r.random() < 0.5:
            lines.append(f"        torch.nn.utils.clip_grad_norm_({m}.parameters(), max_norm=1.0)")
        lines += [f"        {o}.step()",
                  f"        running += loss.item() * {x}.size(0)",
                  f"        correct += (logits.argmax(dim=1) == {y}).sum().item()",
                  f"        seen += {x}.size(0)",
                  '        stats["loss"].append(loss.item())',
                  "        if step % log_every == 0:",
                  "            record = {",
                  '                "epoch": epoch,',
                  '                "step": step,',
                  '                "loss": round(loss.item(), 5),',
                  '                "acc": correct / max(seen, 1),',
                  "            }",
                  ('            logger.info("train %s", record)' if self.r.random() < 0.5
                   else "            print(json.dumps(record))"),
                  "    return running / max(seen, 1), correct / max(seen, 1)"]
        return lines + ["", ""]

    def eval_fn(self) -> list[str]:
        m, x, y = self.model, self.x, self.y
        if self.r.random() < 0.7:
            return _t('''
                def evaluate($m, loader, $c, $dev):
                    $m.eval()
                    total_loss = 0.0
                    total = 0
                    hits = 0
                    with torch.no_grad():
                        for $x, $y in loader:
                            $x, $y = $x.to($dev), $y.to($dev)
                            out = $m($x)
                            total_loss += $c(out, $y).item() * $y.numel()
                            hits += (out.argmax(1) == $y).sum().item()
                            total += $y.numel()
                    $m.train()
                    return {"loss": total_loss / max(total, 1), "acc": hits / max(total, 1)}
            ''', m=m, c=self.crit, dev=self.device, x=x, y=y) + ["", ""]
        return _t('''
            @torch.no_grad()
            def evaluate($m, loader, $c, $dev):
                $m.eval()
                losses = []
                preds, golds = [], []
                for $x, $y in loader:
                    out = $m($x.to($dev))
                    losses.append($c(out, $y.to($dev)).item())
                    preds.extend(out.argmax(dim=-1).tolist())
                    golds.extend($y.tolist())
                acc = sum(int(p == g) for p, g in zip(preds, golds)) / max(len(golds), 1)
                return {"loss": sum(losses) / max(len(losses), 1), "acc": acc}
        ''', m=m, c=self.crit, dev=self.device, x=x, y=y) + ["", ""]

    def checkpoint_fns(self) -> list[str]:
        return _t('''
            def save_checkpoint(model, optimizer, epoch: int, path: str) -> None:
                state = {
                    "model": model.state_dict(),
                    "optimizer": optimizer.state_dict(),
                    "epoch": epoch,
                }
                tmp = path + ".tmp"
                try:
                    torch.save(state, tmp)
                    os.replace(tmp, path)
                except OSError as exc:
                    print(f"could not save checkpoint to {path}: {exc}", file=sys.stderr)


            def load_checkpoint(model, optimizer, path: str) -> int:
                if not os.path.exists(path):
                    return 0
                state = torch.load(path, map_location="cpu")
                model.load_state_dict(state["model"])
                if optimizer is not None and "optimizer" in state:
                    optimizer.load_state_dict(state["optimizer"])
                return int(state.get("epoch", 0))
        ''') + ["", ""]

    def main_fn(self, model_expr: str, loaders_expr: str, crit_expr: str) -> list[str]:
        m, o, c, s = self.model, self.opt, self.crit, self.sched
        sched = self.r.choice([
            f"{self.optim}.lr_scheduler.StepLR({o}, step_size=2, gamma=0.5)",
            f"{self.optim}.lr_scheduler.CosineAnnealingLR({o}, T_max=args.epochs)",
            f"{self.optim}.lr_scheduler.ExponentialLR({o}, gamma=0.9)",
        ])
        return _t('''
            def parse_args(argv=None):
                parser = argparse.ArgumentParser(description=__doc__)
                parser.add_argument("--epochs", type=int, default=$epochs)
                parser.add_argument("--lr", type=float, default=$lr)
                parser.add_argument("--batch-size", type=int, default=$batch)
                parser.add_argument("--checkpoint", default="")
                parser.add_argument("--patience", type=int, default=3)
                parser.add_argument("--cpu", action="store_true")
                return parser.parse_args(argv)


            def main(argv=None) -> int:
                args = parse_args(argv)
                torch.manual_seed(0)
                $dev = torch.device("cuda" if torch.cuda.is_available() and not args.cpu else "cpu")
                train_loader, val_loader = $loaders
                $m = $model_expr.to($dev)
                $o = $optim.Adam($m.parameters(), lr=args.lr)
                $s = $sched
                $c = $crit
                history = {"train_loss": [], "train_acc": [], "val_loss": [], "val_acc": []}
                best, bad_epochs = float("inf"), 0
                for epoch in range(args.epochs):
                    started = time.time()
                    tr_loss, tr_acc = train_one_epoch($m, train_loader, $o, $c, $dev, epoch)
                    metrics = evaluate($m, val_loader, $c, $dev)
                    $s.step()
                    history["train_loss"].append(tr_loss)
                    history["train_acc"].append(tr_acc)
                    history["val_loss"].append(metrics["loss"])
                    history["val_acc"].append(metrics["acc"])
                    elapsed = time.time() - started
                    print(f"epoch {epoch}: train {tr_loss:.4f}/{tr_acc:.3f} "
                          f"val {metrics['loss']:.4f}/{metrics['acc']:.3f} ({elapsed:.1f}s)")
                    if metrics["loss"] < best - 1e-4:
                        best, bad_epochs = metrics["loss"], 0
                        if args.checkpoint:
                            save_checkpoint($m, $o, epoch, args.checkpoint)
                    else:
                        bad_epochs += 1
                        if bad_epochs >= args.patience:
                            print("early stopping")
                            break
                return 0


            if __name__ == "__main__":
                sys.exit(main())
        ''', epochs=self.epochs, lr=self.lr, batch=self.batch, dev=self.device, loaders=loaders_expr,
            m=m, model_expr=model_expr, o=o, optim=self.optim, s=s, sched=sched, c=c, crit=crit_expr)

    # ------------------------------------------------------------------ kinds
    def build_classifier(self, cnn: bool = False) -> list[str]:
        r = self.r
        out = self.header() + self.config_block() + self.seed_fn()
        if cnn:
            out += self.image_dataset() + self.cnn_class()
            out += _t('''
                def make_loaders(batch_size: int):
                    train = DataLoader($cls(), batch_size=batch_size, shuffle=True)
                    val = DataLoader($cls(n=128), batch_size=batch_size)
                    return train, val
            ''', cls=self.data_cls) + ["", ""]
            classes = [self.model_cls]
        else:
            out += self.dataset_class() + self.loaders_fn() + self.mlp_class()
            classes = [self.model_cls]
            if r.random() < 0.5:
                other = self.fresh(r.choice(_PREFIX) + "Baseline")
                out += self.mlp_class(other)
                classes.append(other)
        out += self.pad(r.randint(0, 2))
        out += self.factory_fn(classes)
        planted_target = r.random() < 0.12
        double_bw = not planted_target and r.random() < 0.05
        out += self.train_fn(planted_target=planted_target, double_backward=double_bw)
        out += self.eval_fn()
        out += self.pad(r.randint(0, 2))
        out += self.checkpoint_fns()
        crit = r.choice([f"{self.nn}.CrossEntropyLoss()", f"{self.nn}.CrossEntropyLoss(label_smoothing=0.1)"])
        out += ["#: padding"] + self.main_fn(f"build_model({self.model_cls.lower()!r})",
                                             "make_loaders(args.batch_size)", crit)
        return out

    def build_regression(self) -> list[str]:
        r = self.r
        out = self.header() + self.config_block()
        out += _t('''
            def make_data(n: int = $n, dim: int = $dim, noise: float = 0.1):
                true_w = torch.randn(dim, 1)
                true_b = torch.randn(1)
                X = torch.randn(n, dim)
                Y = X @ true_w + true_b + noise * torch.randn(n, 1)
                return torch.utils.data.TensorDataset(X, Y)
        ''', n=r.choice([1000, 2000, 5000]), dim=self.in_dim) + ["", ""]
        out += self.mlp_class(out_dim="out_dim")
        out += self.pad(r.randint(1, 3))
        planted = r.random() < 0.15
        m, o, x, y = self.model, self.opt, self.x, self.y
        lines = [f"def fit({m}, dataset, epochs: int = {self.epochs}, lr: float = {self.lr}, teacher=None):",
                 f"    {o} = {self.optim}.SGD({m}.parameters(), lr=lr, momentum=0.9)",
                 f"    {self.sched} = {self.optim}.lr_scheduler.ReduceLROnPlateau({o}, patience=2)",
                 f"    {self.loader} = DataLoader(dataset, batch_size={self.batch}, shuffle=True)",
                 "    log = []"]
        if planted:
            self.planted.append("target-outside-loop")
            lines += ["    probe = dataset.tensors[0][:64]",
                      f"    target = teacher(probe) if teacher is not None else {m}(probe) * 0.5"]
        lines += ["    for epoch in range(epochs):",
                  "        epoch_loss = 0.0",
                  f"        for {x}, {y} in {self.loader}:",
                  f"            pred = {m}({x})",
                  ("            loss = " + (f"{self.F}.mse_loss(pred, {y})" if self.F else f"((pred - {y}) ** 2).mean()")),
                  ]
        if planted:
            lines.append(f"            loss = loss + 0.1 * ({m}(probe) - target).pow(2).mean()")
        lines += [f"            {o}.zero_grad()",
                  "            loss.backward()",
                  f"            {o}.step()",
                  "            epoch_loss += loss.item()",
                  f"        {self.sched}.step(epoch_loss)",
                  '        log.append({"epoch": epoch, "loss": epoch_loss})',
                  "    return log", "", ""]
        out += lines
        out += self.pad(r.randint(0, 2))
        out += _t('''
            def r2_score(model, dataset) -> float:
                X, Y = dataset.tensors
                with torch.no_grad():
                    pred = model(X)
                ss_res = ((Y - pred) ** 2).sum().item()
                ss_tot = ((Y - Y.mean()) ** 2).sum().item()
                return 1.0 - ss_res / max(ss_tot, 1e-12)


            def main():
                parser = argparse.ArgumentParser()
                parser.add_argument("--epochs", type=int, default=$epochs)
                args = parser.parse_args()
                data = make_data()
                $m = $cls(out_dim=1)
                teacher = $cls(out_dim=1)
                log = fit($m, data, epochs=args.epochs, teacher=teacher)
                print(json.dumps(log[-1]))
                print("r2", r2_score($m, data))


            if __name__ == "__main__":
                main()
        ''', epochs=self.epochs, m=m, cls=self.model_cls)
        return out

    def build_manual(self) -> list[str]:
        r = self.r
        out = self.header() + self.pad(r.randint(0, 2))
        planted = r.random() < 0.3
        dim = r.choice([3, 5, 10])
        lines = _t('''
            def make_problem(n: int = $n, dim: int = $dim):
                true_W = torch.randn(dim, 1)
                true_b = torch.tensor([0.5])
                X = torch.randn(n, dim)
                Y = torch.mm(X, true_W) + true_b + 0.01 * torch.randn(n, 1)
                return X, Y, true_W, true_b


            def gradient_descent(X, Y, steps: int = $steps, lr: float = $lr):
                W = torch.zeros(X.shape[1], 1, requires_grad=True)
                b = torch.zeros(1, requires_grad=True)
                losses = []
        ''', n=r.choice([100, 500, 1000]), dim=dim, steps=r.choice([50, 100, 200]), lr=r.choice(["0.1", "0.05"]))
        if planted:
            self.planted.append("target-outside-loop")
            lines += ["    pred = X @ W + b  # computed once, outside the loop",
                      "    for step in range(steps):",
                      "        loss = ((pred - Y) ** 2).mean()"]
        else:
            lines += ["    for step in range(steps):",
                      r.choice(["        pred = X @ W + b", "        pred = torch.mm(X, W) + b",
                                "        pred = torch.matmul(X, W).add(b)"]),
                      "        loss = ((pred - Y) ** 2).mean()"]
        lines += _ind(_t('''
            loss.backward()
            with torch.no_grad():
                W -= lr * W.grad
                b -= lr * b.grad
                W.grad.zero_()
                b.grad.zero_()
            losses.append(loss.item())
            if step % 10 == 0:
                print(f"step {step}: loss {loss.item():.5f}")
        '''), 8) + ["    return W.detach(), b.detach(), losses", "", ""]
        out += lines
        # autograd.grad based penalty, correct
        out += _t('''
            def gradient_penalty(fn, x):
                x = x.clone().requires_grad_(True)
                y = fn(x).sum()
                (g,) = torch.autograd.grad(y, x, create_graph=True)
                return (g.norm(2, dim=-1) - 1).pow(2).mean()


            def newton_step(f, x0, iters: int = 5):
                x = x0.clone().detach().requires_grad_(True)
                for _ in range(iters):
                    y = f(x)
                    (g,) = torch.autograd.grad(y, x, create_graph=True)
                    (h,) = torch.autograd.grad(g, x)
                    with torch.no_grad():
                        x -= g / (h + 1e-8)
                return x.detach()
        ''') + ["", ""]
        out += self.pad(r.randint(1, 3))
        out += _t('''
            def main():
                X, Y, true_W, true_b = make_problem()
                W, b, losses = gradient_descent(X, Y)
                err = (W - true_W).abs().max().item()
                print("max weight error", err, "final loss", losses[-1])
                root = newton_step(lambda t: (t ** 3 - 2 * t).sum(), torch.tensor([1.5]))
                print("root", root.tolist())


            if __name__ == "__main__":
                main()
        ''')
        return out

    def build_gan(self) -> list[str]:
        r = self.r
        nn_ = self.nn
        z = r.choice([2, 8, 16])
        out = self.header() + self.config_block()
        out += _t('''
            class Generator($nn.Module):
                def __init__(self, z_dim: int = $z, hidden: int = $h):
                    super().__init__()
                    self.body = $nn.Sequential(
                        $nn.Linear(z_dim, hidden), $nn.ReLU(),
                        $nn.Linear(hidden, hidden), $nn.ReLU(),
                        $nn.Linear(hidden, 2),
                    )

                def forward(self, z):
                    return self.body(z)


            class Discriminator($nn.Module):
                def __init__(self, hidden: int = $h):
                    super().__init__()
                    self.body = $nn.Sequential(
                        $nn.Linear(2, hidden), $nn.LeakyReLU(0.2),
                        $nn.Linear(hidden, hidden), $nn.LeakyReLU(0.2),
                        $nn.Linear(hidden, 1),
                    )

                def forward(self, x):
                    return self.body(x)


            def sample_real(n: int, modes: int = 8, radius: float = 2.0):
                idx = torch.randint(0, modes, (n,))
                angle = idx.float() * (2 * math.pi / modes)
                centers = torch.stack([torch.cos(angle), torch.sin(angle)], dim=1) * radius
                return centers + 0.05 * torch.randn(n, 2)
        ''', nn=nn_, z=z, h=self.hidden) + ["", ""]
        out += self.pad(r.randint(0, 2))
        planted = r.random() < 0.3
        lines = _t('''
            def train_gan(steps: int = $steps, batch: int = $batch, z_dim: int = $z):
                G, D = Generator(z_dim), Discriminator()
                opt_g = $optim.Adam(G.parameters(), lr=2e-4, betas=(0.5, 0.999))
                opt_d = $optim.Adam(D.parameters(), lr=2e-4, betas=(0.5, 0.999))
                bce = $nn.BCEWithLogitsLoss()
                ones = torch.ones(batch, 1)
                zeros = torch.zeros(batch, 1)
                history = {"d": [], "g": []}
                for step in range(steps):
                    real = sample_real(batch)
                    noise = torch.randn(batch, z_dim)
                    fake = G(noise)
                    # discriminator step
                    opt_d.zero_grad()
        ''', steps=r.choice([500, 1000, 2000]), batch=self.batch, z=z, optim=self.optim, nn=nn_)
        if planted:
            self.planted.append("gan-no-detach")
            lines.append("        d_loss = bce(D(real), ones) + bce(D(fake), zeros)")
        else:
            lines.append(r.choice(["        d_loss = bce(D(real), ones) + bce(D(fake.detach()), zeros)",
                                   "        d_loss = bce(D(real), ones) + bce(D(fake.detach()), zeros)",
                                   "        d_loss = (bce(D(real), ones) + bce(D(fake.detach()), zeros)) / 2"]))
        lines += _ind(_t('''
            d_loss.backward()
            opt_d.step()
            # generator step
            opt_g.zero_grad()
            g_loss = bce(D(fake), ones)
            g_loss.backward()
            opt_g.step()
            history["d"].append(d_loss.item())
            history["g"].append(g_loss.item())
            if step % 100 == 0:
                print(f"{step:5d} d={d_loss.item():.3f} g={g_loss.item():.3f}")
        '''), 8) + ["    return G, D, history", "", ""]
        out += lines
        out += self.pad(r.randint(0, 2))
        out += _t('''
            def mode_coverage(G, n: int = 2000, z_dim: int = $z, modes: int = 8) -> float:
                with torch.no_grad():
                    pts = G(torch.randn(n, z_dim))
                angles = torch.atan2(pts[:, 1], pts[:, 0])
                bins = ((angles + math.pi) / (2 * math.pi) * modes).long().clamp(0, modes - 1)
                return len(set(bins.tolist())) / modes


            if __name__ == "__main__":
                G, D, hist = train_gan()
                print("coverage", mode_coverage(G))
        ''', z=z)
        return out

    def build_rnn(self) -> list[str]:
        r = self.r
        nn_ = self.nn
        cell = r.choice(["LSTM", "GRU", "RNN"])
        out = self.header() + self.config_block()
        out += _t('''
            class CharVocab:
                def __init__(self, text: str):
                    chars = sorted(set(text))
                    self.stoi = {ch: i for i, ch in enumerate(chars)}
                    self.itos = {i: ch for ch, i in self.stoi.items()}

                def __len__(self):
                    return len(self.stoi)

                def encode(self, s: str) -> List[int]:
                    return [self.stoi[c] for c in s if c in self.stoi]

                def decode(self, ids) -> str:
                    return "".join(self.itos.get(int(i), "?") for i in ids)


            class CharRNN($nn.Module):
                def __init__(self, vocab_size: int, emb: int = $emb, hidden: int = $h, layers: int = $layers):
                    super().__init__()
                    self.embed = $nn.Embedding(vocab_size, emb)
                    self.rnn = $nn.$cell(emb, hidden, num_layers=layers, batch_first=True)
                    self.proj = $nn.Linear(hidden, vocab_size)

                def forward(self, ids, hidden=None):
                    out, hidden = self.rnn(self.embed(ids), hidden)
                    return self.proj(out), hidden


            def batchify(ids: List[int], batch: int, seq: int):
                data = torch.tensor(ids[: (len(ids) // (batch * seq)) * batch * seq])
                data = data.view(batch, -1)
                for start in range(0, data.size(1) - seq - 1, seq):
                    yield data[:, start:start + seq], data[:, start + 1:start + seq + 1]
        ''', nn=nn_, emb=r.choice([16, 32, 64]), h=self.hidden, layers=r.choice([1, 2]), cell=cell) + ["", ""]
        out += self.pad(r.randint(0, 2))
        planted = r.random() < 0.35
        if cell == "LSTM":
            detach = r.choice(["hidden = tuple(h.detach() for h in hidden)",
                               "hidden = (hidden[0].detach(), hidden[1].detach())"])
        else:
            detach = r.choice(["hidden = hidden.detach()", "hidden = hidden.detach()"])
        lines = _t('''
            def train_lm(text: str, epochs: int = $epochs, batch: int = 8, seq: int = 32):
                vocab = CharVocab(text)
                $m = CharRNN(len(vocab))
                $o = $optim.Adam($m.parameters(), lr=$lr)
                $c = $nn.CrossEntropyLoss()
                for epoch in range(epochs):
                    hidden = None
                    total, count = 0.0, 0
                    for $x, $y in batchify(vocab.encode(text), batch, seq):
                        $o.zero_grad()
                        logits, hidden = $m($x, hidden)
                        loss = $c(logits.reshape(-1, logits.size(-1)), $y.reshape(-1))
                        loss.backward()
                        torch.nn.utils.clip_grad_norm_($m.parameters(), 5.0)
                        $o.step()
        ''', epochs=self.epochs, m=self.model, o=self.opt, optim=self.optim, lr=self.lr, c=self.crit,
            nn=nn_, x=self.x, y=self.y)
        if planted:
            self.planted.append("hidden-not-detached")
        else:
            lines.append("            " + detach)
        lines += _ind(_t('''
            total += loss.item()
            count += 1
        print(f"epoch {epoch} ppl {math.exp(total / max(count, 1)):.2f}")
    return $m, vocab
        ''', m=self.model), 4) + ["", ""]
        # fix indentation of the last two lines (dedented relative to the loop)
        out += lines
        out += _t('''
            @torch.no_grad()
            def sample($m, vocab, prompt: str, length: int = 100, temperature: float = 0.8) -> str:
                $m.eval()
                ids = torch.tensor([vocab.encode(prompt)])
                logits, hidden = $m(ids)
                out = list(prompt)
                for _ in range(length):
                    probs = torch.softmax(logits[:, -1] / temperature, dim=-1)
                    nxt = torch.multinomial(probs, 1)
                    out.append(vocab.decode(nxt[0].tolist()))
                    logits, hidden = $m(nxt, hidden)
                return "".join(out)


            if __name__ == "__main__":
                corpus_text = "the quick brown fox jumps over the lazy dog. " * 200
                trained, vocab = train_lm(corpus_text)
                print(sample(trained, vocab, "the "))
        ''', m=self.model)
        return out

    def build_attention(self) -> list[str]:
        r = self.r
        nn_ = self.nn
        out = self.header() + self.config_block()
        out += _t('''
            class TokenDataset(Dataset):
                def __init__(self, n: int = 512, seq: int = 24, vocab: int = 100):
                    self.tokens = torch.randint(1, vocab, (n, seq))
                    self.labels = (self.tokens[:, 0] > vocab // 2).long()

                def __len__(self):
                    return self.tokens.size(0)

                def __getitem__(self, i):
                    return self.tokens[i], self.labels[i]


            class SelfAttention($nn.Module):
                def __init__(self, dim: int, heads: int = $heads):
                    super().__init__()
                    assert dim % heads == 0, "dim must divide heads"
                    self.heads = heads
                    self.qkv = $nn.Linear(dim, dim * 3)
                    self.out = $nn.Linear(dim, dim)

                def forward(self, x, mask=None):
                    b, t, d = x.shape
                    q, k, v = self.qkv(x).chunk(3, dim=-1)
                    q = q.view(b, t, self.heads, -1).transpose(1, 2)
                    k = k.view(b, t, self.heads, -1).transpose(1, 2)
                    v = v.view(b, t, self.heads, -1).transpose(1, 2)
                    att = (q @ k.transpose(-2, -1)) / math.sqrt(q.size(-1))
                    if mask is not None:
                        att = att.masked_fill(mask[:, None, None, :] == 0, float("-inf"))
                    att = torch.softmax(att, dim=-1)
                    y = (att @ v).transpose(1, 2).reshape(b, t, d)
                    return self.out(y)


            class EncoderLayer($nn.Module):
                def __init__(self, dim: int, ff: int = $ff, dropout: float = 0.1):
                    super().__init__()
                    self.attn = SelfAttention(dim)
                    self.ln1 = $nn.LayerNorm(dim)
                    self.ln2 = $nn.LayerNorm(dim)
                    self.ff = $nn.Sequential($nn.Linear(dim, ff), $nn.GELU(), $nn.Linear(ff, dim))
                    self.drop = $nn.Dropout(dropout)

                def forward(self, x, mask=None):
                    x = x + self.drop(self.attn(self.ln1(x), mask))
                    return x + self.drop(self.ff(self.ln2(x)))


            class $cls($nn.Module):
                def __init__(self, vocab: int = 100, dim: int = $dim, depth: int = $depth, num_classes: int = 2):
                    super().__init__()
                    self.embed = $nn.Embedding(vocab, dim)
                    self.pos = $nn.Parameter(torch.zeros(1, 64, dim))
                    self.layers = $nn.ModuleList([EncoderLayer(dim) for _ in range(depth)])
                    self.head = $nn.Linear(dim, num_classes)

                def forward(self, tokens):
                    mask = (tokens != 0).long()
                    h = self.embed(tokens) + self.pos[:, : tokens.size(1)]
                    for layer in self.layers:
                        h = layer(h, mask)
                    return self.head(h.mean(dim=1))
        ''', nn=nn_, heads=r.choice([2, 4]), ff=r.choice([128, 256]), cls=self.model_cls,
            dim=r.choice([32, 64]), depth=r.choice([2, 3, 4])) + ["", ""]
        out += self.pad(r.randint(0, 2))
        out += _t('''
            def make_loaders(batch_size: int):
                return (DataLoader(TokenDataset(), batch_size=batch_size, shuffle=True),
                        DataLoader(TokenDataset(n=128), batch_size=batch_size))
        ''') + ["", ""]
        out += self.factory_fn([self.model_cls])
        out += self.train_fn(planted_target=r.random() < 0.1)
        out += self.eval_fn()
        out += self.checkpoint_fns()
        out += self.main_fn(f"{self.model_cls}()", "make_loaders(args.batch_size)", f"{nn_}.CrossEntropyLoss()")
        return out

    def build_utils(self) -> list[str]:
        out = self.header(torch_file=False)
        out += self.pad(self.r.randint(4, 8))
        out += _t('''
            def main(argv=None) -> int:
                parser = argparse.ArgumentParser(description="utility entry point")
                parser.add_argument("paths", nargs="*")
                parser.add_argument("--verbose", "-v", action="count", default=0)
                args = parser.parse_args(argv)
                failures = 0
                for p in args.paths:
                    try:
                        with open(p, encoding="utf-8") as fh:
                            text = fh.read()
                    except OSError as exc:
                        print(f"{p}: {exc}", file=sys.stderr)
                        failures += 1
                        continue
                    words = text.split()
                    summary = {"path": p, "lines": text.count("\\n"), "words": len(words)}
                    if args.verbose:
                        summary["top"] = sorted({w: words.count(w) for w in set(words)}.items(),
                                                key=lambda kv: -kv[1])[:5]
                    print(summary)
                return 1 if failures else 0


            if __name__ == "__main__":
                sys.exit(main())
        ''')
        return out

    def build_data(self) -> list[str]:
        out = self.header(torch_file=False)
        out += _t('''
            class CsvTable:
                """A tiny column store for CSV-like data."""

                def __init__(self, header: List[str], rows: Optional[List[List[str]]] = None):
                    self.header = list(header)
                    self.rows = [list(r) for r in rows or []]

                @classmethod
                def from_text(cls, text: str, sep: str = ","):
                    lines = [ln for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]
                    if not lines:
                        raise ValueError("empty table")
                    header = [h.strip() for h in lines[0].split(sep)]
                    rows = [[c.strip() for c in ln.split(sep)] for ln in lines[1:]]
                    bad = [i for i, r in enumerate(rows, 2) if len(r) != len(header)]
                    if bad:
                        raise ValueError(f"rows with wrong width: {bad[:5]}")
                    return cls(header, rows)

                def column(self, name: str) -> List[str]:
                    i = self.header.index(name)
                    return [r[i] for r in self.rows]

                def numeric(self, name: str) -> "np.ndarray":
                    vals = []
                    for v in self.column(name):
                        try:
                            vals.append(float(v))
                        except ValueError:
                            vals.append(float("nan"))
                    return np.asarray(vals)

                def where(self, pred) -> "CsvTable":
                    return CsvTable(self.header, [r for r in self.rows if pred(dict(zip(self.header, r)))])

                def group_by(self, name: str) -> Dict[str, "CsvTable"]:
                    groups: Dict[str, list] = {}
                    i = self.header.index(name)
                    for r in self.rows:
                        groups.setdefault(r[i], []).append(r)
                    return {k: CsvTable(self.header, v) for k, v in groups.items()}

                def __len__(self):
                    return len(self.rows)
        ''') + ["", ""]
        out += self.pad(self.r.randint(3, 6))
        out += _t('''
            def standardize(values: "np.ndarray") -> "np.ndarray":
                mu = np.nanmean(values)
                sd = np.nanstd(values) or 1.0
                return (values - mu) / sd


            if __name__ == "__main__":
                demo = "a,b,c\\n1,2,x\\n3,4,y\\n5,6,x\\n"
                table = CsvTable.from_text(demo)
                print({k: len(v) for k, v in table.group_by("c").items()})
                print(standardize(table.numeric("a")).round(3).tolist())
        ''')
        return out

    # ------------------------------------------------------------------ padding helpers
    def pad(self, count: int) -> list[str]:
        out: list[str] = []
        for _ in range(count):
            out += self.r.choice(_PADDERS)(self) + ["", ""]
        return out

    def build(self, target_lines: int) -> str:
        builder = {
            "classifier": self.build_classifier,
            "cnn": lambda: self.build_classifier(cnn=True),
            "regression": self.build_regression,
            "manual": self.build_manual,
            "gan": self.build_gan,
            "rnn": self.build_rnn,
            "attention": self.build_attention,
            "utils": self.build_utils,
            "data": self.build_data,
        }[self.kind]
        lines = builder()
        # insert padding helpers before the trailing main section until the target is reached
        cut = _main_cut(lines)
        head, tail = lines[:cut], lines[cut:]
        while len(head) + len(tail) < target_lines:
            head += self.pad(1)
        text = "\n".join(ln for ln in head + tail if ln != "#: padding") + "\n"
        # trim consecutive blank lines beyond two
        while "\n\n\n\n" in text:
            text = text.replace("\n\n\n\n", "\n\n\n")
        return text


def _main_cut(lines: list[str]) -> int:
    for marker in ("#: padding", "def parse_args(", "def main(", 'if __name__ == "__main__":'):
        for i, ln in enumerate(lines):
            if ln.startswith(marker):
                return i
    return len(lines)


# ---------------------------------------------------------------------- padders
def _name(g: _FileGen, kind: str = "fn") -> str:
    r = g.r
    if kind == "cls":
        return g.fresh(r.choice(_NOUNS).capitalize() + r.choice(["Cache", "Registry", "Buffer",
                                                                    "Index", "Counter", "Pool", "Store"]))
    return g.fresh(f"{r.choice(_VERBS)}_{r.choice(_NOUNS)}s")


def _pad_comprehensions(g: _FileGen) -> list[str]:
    return _t('''
        def $fn(items: Iterable[Dict[str, Any]], key: str = "$key") -> Dict[str, List[Any]]:
            """Group dictionaries by ``key`` and keep the non-empty values."""
            groups: Dict[str, List[Any]] = {}
            for item in items:
                groups.setdefault(str(item.get(key, "")), []).append(item)
            return {
                k: [v for v in vs if v]
                for k, vs in sorted(groups.items())
                if k and any(vs)
            }
    ''', fn=_name(g), key=g.r.choice(_NOUNS))


def _pad_try(g: _FileGen) -> list[str]:
    return _t('''
        def $fn(path: str, default=None):
            try:
                with open(path, "r", encoding="utf-8") as fh:
                    data = json.load(fh)
            except FileNotFoundError:
                return default
            except (OSError, ValueError) as exc:
                print(f"warning: could not read {path}: {exc}", file=sys.stderr)
                return default
            else:
                if isinstance(data, dict):
                    data = {str(k).strip(): v for k, v in data.items()}
                return data
            finally:
                pass
    ''', fn=_name(g))


def _pad_class(g: _FileGen) -> list[str]:
    return _t('''
        class $cls:
            """LRU-ish mapping with a size bound of $cap."""

            def __init__(self, capacity: int = $cap):
                self.capacity = capacity
                self._data: Dict[Any, Any] = {}
                self._hits = 0
                self._misses = 0

            def get(self, key, default=None):
                if key in self._data:
                    self._hits += 1
                    value = self._data.pop(key)
                    self._data[key] = value
                    return value
                self._misses += 1
                return default

            def put(self, key, value) -> None:
                if key in self._data:
                    self._data.pop(key)
                elif len(self._data) >= self.capacity:
                    oldest = next(iter(self._data))
                    del self._data[oldest]
                self._data[key] = value

            @property
            def hit_rate(self) -> float:
                total = self._hits + self._misses
                return self._hits / total if total else 0.0

            def __len__(self) -> int:
                return len(self._data)

            def __contains__(self, key) -> bool:
                return key in self._data
    ''', cls=_name(g, "cls"), cap=g.r.choice([16, 64, 128, 1024]))


def _pad_generator(g: _FileGen) -> list[str]:
    return _t('''
        def $fn(seq, size: int = $size, step: Optional[int] = None):
            """Yield windows of ``size`` over ``seq``."""
            step = step or size
            if size <= 0:
                raise ValueError("size must be positive")
            buf = []
            for i, elem in enumerate(seq):
                buf.append(elem)
                if len(buf) == size:
                    yield tuple(buf)
                    buf = buf[step:] if step < size else []
            if buf:
                yield tuple(buf)
    ''', fn=_name(g), size=g.r.choice([2, 4, 8, 16]))


def _pad_stats(g: _FileGen) -> list[str]:
    return _t('''
        def $fn(values: List[float]) -> Dict[str, float]:
            n = len(values)
            if n == 0:
                return {"n": 0, "mean": float("nan"), "std": float("nan")}
            mean = sum(values) / n
            var = sum((v - mean) ** 2 for v in values) / max(n - 1, 1)
            ordered = sorted(values)
            mid = n // 2
            median = ordered[mid] if n % 2 else 0.5 * (ordered[mid - 1] + ordered[mid])
            return {
                "n": n,
                "mean": mean,
                "std": var ** 0.5,
                "median": median,
                "min": ordered[0],
                "max": ordered[-1],
                "p90": ordered[min(n - 1, int(0.9 * n))],
            }
    ''', fn=g.fresh("summarize_" + g.r.choice(_NOUNS) + "s"))


def _pad_text(g: _FileGen) -> list[str]:
    return _t('''
        def $fn(text: str, width: int = $w) -> List[str]:
            words = text.replace("\\t", " ").split()
            lines, current = [], []
            for word in words:
                if sum(len(w) + 1 for w in current) + len(word) > width and current:
                    lines.append(" ".join(current))
                    current = []
                current.append(word)
            if current:
                lines.append(" ".join(current))
            return [ln.rstrip() for ln in lines if ln.strip()]
    ''', fn=_name(g), w=g.r.choice([40, 60, 72, 80, 100]))


def _pad_decorator(g: _FileGen) -> list[str]:
    return _t('''
        def $fn(retries: int = $n, exceptions=(Exception,)):
            """Retry the decorated function on failure."""

            def decorate(func):
                def wrapper(*args, **kwargs):
                    last = None
                    for attempt in range(retries):
                        try:
                            return func(*args, **kwargs)
                        except exceptions as exc:  # noqa: PERF203
                            last = exc
                            print(f"{func.__name__}: attempt {attempt + 1} failed: {exc}")
                    raise RuntimeError(f"{func.__name__} failed after {retries} attempts") from last

                wrapper.__name__ = func.__name__
                wrapper.__doc__ = func.__doc__
                return wrapper

            return decorate
    ''', fn=g.fresh("retry_" + g.r.choice(_NOUNS)), n=g.r.choice([2, 3, 5]))


def _pad_dataclass(g: _FileGen) -> list[str]:
    cls = _name(g, "cls").replace("Cache", "Spec").replace("Pool", "Spec")
    return _t('''
        class $cls:
            __slots__ = ("name", "weight", "tags", "enabled")

            def __init__(self, name: str, weight: float = 1.0, tags=None, enabled: bool = True):
                self.name = name
                self.weight = float(weight)
                self.tags = tuple(tags or ())
                self.enabled = enabled

            def to_dict(self) -> Dict[str, Any]:
                return {s: getattr(self, s) for s in self.__slots__}

            @classmethod
            def from_dict(cls, d: Dict[str, Any]) -> "$cls":
                unknown = set(d) - set(cls.__slots__)
                if unknown:
                    raise TypeError(f"unknown fields: {sorted(unknown)}")
                return cls(**d)

            def __eq__(self, other):
                return isinstance(other, $cls) and self.to_dict() == other.to_dict()

            def __hash__(self):
                return hash((self.name, self.weight, self.tags, self.enabled))
    ''', cls=cls)


def _pad_math(g: _FileGen) -> list[str]:
    return _t('''
        def $fn(a: List[List[float]], b: List[List[float]]) -> List[List[float]]:
            if not a or not b or len(a[0]) != len(b):
                raise ValueError("shape mismatch")
            cols = list(zip(*b))
            return [[sum(x * y for x, y in zip(row, col)) for col in cols] for row in a]
    ''', fn=g.fresh("matmul_" + g.r.choice(_WORDS).rstrip("_")))


def _pad_schedule(g: _FileGen) -> list[str]:
    return _t('''
        def $fn(step: int, warmup: int = $warm, total: int = $total, base: float = $base) -> float:
            """Linear warm-up followed by cosine decay."""
            if step < warmup:
                return base * (step + 1) / warmup
            progress = min(1.0, (step - warmup) / max(1, total - warmup))
            return base * 0.5 * (1.0 + math.cos(math.pi * progress))
    ''', fn=g.fresh("lr_at_" + g.r.choice(_WORDS).rstrip("_")), warm=g.r.choice([100, 500, 1000]),
        total=g.r.choice([10000, 50000]), base=g.r.choice(["1e-3", "3e-4"]))


def _pad_meter(g: _FileGen) -> list[str]:
    return _t('''
        class $cls:
            """Running average of a scalar metric."""

            def __init__(self, name: str, fmt: str = ":.4f"):
                self.name = name
                self.fmt = fmt
                self.reset()

            def reset(self):
                self.val = 0.0
                self.avg = 0.0
                self.sum = 0.0
                self.count = 0

            def update(self, val: float, n: int = 1):
                self.val = val
                self.sum += val * n
                self.count += n
                self.avg = self.sum / self.count

            def __str__(self):
                fmtstr = "{name} {val" + self.fmt + "} ({avg" + self.fmt + "})"
                return fmtstr.format(**self.__dict__)
    ''', cls=g.fresh(g.r.choice(["Average", "Running", "Smoothed"]) + g.r.choice(["Meter", "Tracker"])))


def _pad_walk(g: _FileGen) -> list[str]:
    return _t('''
        def $fn(root: str, suffixes=(".py", ".txt"), skip=("__pycache__", ".git")) -> List[str]:
            found = []
            for dirpath, dirnames, filenames in os.walk(root):
                dirnames[:] = [d for d in dirnames if d not in skip and not d.startswith(".")]
                for fname in filenames:
                    if fname.endswith(tuple(suffixes)):
                        found.append(os.path.join(dirpath, fname))
            found.sort(key=lambda p: (p.count(os.sep), p))
            return found
    ''', fn=g.fresh("find_" + g.r.choice(_NOUNS) + "_files"))


def _pad_confusion(g: _FileGen) -> list[str]:
    return _t('''
        def $fn(preds: List[int], golds: List[int], num_classes: int) -> Dict[str, Any]:
            matrix = [[0] * num_classes for _ in range(num_classes)]
            for p, t in zip(preds, golds):
                matrix[t][p] += 1
            per_class = {}
            for c in range(num_classes):
                tp = matrix[c][c]
                fp = sum(matrix[r][c] for r in range(num_classes)) - tp
                fn = sum(matrix[c]) - tp
                precision = tp / (tp + fp) if tp + fp else 0.0
                recall = tp / (tp + fn) if tp + fn else 0.0
                f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
                per_class[c] = {"precision": precision, "recall": recall, "f1": f1}
            macro = sum(v["f1"] for v in per_class.values()) / max(num_classes, 1)
            return {"matrix": matrix, "per_class": per_class, "macro_f1": macro}
    ''', fn=g.fresh("confusion_" + g.r.choice(_WORDS).rstrip("_")))


def _pad_tensor_util(g: _FileGen) -> list[str]:
    if g.kind in ("utils", "data"):
        return _pad_stats(g)
    return _t('''
        def $fn(module, include_frozen: bool = False) -> Dict[str, Any]:
            rows = []
            total = 0
            for name, p in module.named_parameters():
                if not p.requires_grad and not include_frozen:
                    continue
                rows.append((name, tuple(p.shape), p.numel()))
                total += p.numel()
            grads = [p.grad.norm().item() for p in module.parameters() if p.grad is not None]
            return {
                "rows": rows,
                "total": total,
                "grad_norm": (sum(g * g for g in grads) ** 0.5) if grads else 0.0,
            }
    ''', fn=g.fresh("describe_" + g.r.choice(["module", "params", "weights", "layers"])))


def _pad_ema(g: _FileGen) -> list[str]:
    if g.kind in ("utils", "data"):
        return _pad_generator(g)
    return _t('''
        class $cls:
            """Exponential moving average of a model's parameters."""

            def __init__(self, model, decay: float = $decay):
                self.decay = decay
                self.shadow = {n: p.detach().clone() for n, p in model.named_parameters() if p.requires_grad}

            @torch.no_grad()
            def update(self, model):
                for n, p in model.named_parameters():
                    if n in self.shadow:
                        self.shadow[n].mul_(self.decay).add_(p.detach(), alpha=1 - self.decay)

            def copy_to(self, model):
                with torch.no_grad():
                    for n, p in model.named_parameters():
                        if n in self.shadow:
                            p.copy_(self.shadow[n])
    ''', cls=g.fresh("EMA" + g.r.choice(["", "Weights", "Tracker"])), decay=g.r.choice(["0.99", "0.999"]))


def _pad_match(g: _FileGen) -> list[str]:
    return _t('''
        def $fn(event: Dict[str, Any]) -> str:
            kind = event.get("kind")
            if kind == "start":
                return f"started {event.get('name', '?')}"
            elif kind == "progress":
                pct = 100.0 * event.get("done", 0) / max(event.get("total", 1), 1)
                return f"{pct:5.1f}% {'#' * int(pct // 10):<10}"
            elif kind in ("end", "stop"):
                return "finished" if not event.get("error") else f"failed: {event['error']}"
            else:
                return " ".join(f"{k}={v}" for k, v in sorted(event.items()))
    ''', fn=g.fresh("describe_" + g.r.choice(_NOUNS)))


def _pad_lambda_table(g: _FileGen) -> list[str]:
    return _t('''
        $name = {
            "identity": lambda v: v,
            "square": lambda v: v * v,
            "clip": lambda v, lo=-1.0, hi=1.0: max(lo, min(hi, v)),
            "sign": lambda v: (v > 0) - (v < 0),
            "halve": lambda v: v / 2,
        }


        def $fn(name: str, values: List[float]) -> List[float]:
            try:
                op = $name[name]
            except KeyError:
                raise KeyError(f"no transform {name!r}") from None
            return [op(v) for v in values]
    ''', name=g.fresh(g.r.choice(_WORDS).upper().rstrip("_") + "_TRANSFORMS"), fn=_name(g))


_PADDERS = [_pad_comprehensions, _pad_try, _pad_class, _pad_generator, _pad_stats, _pad_text,
            _pad_decorator, _pad_dataclass, _pad_math, _pad_schedule, _pad_meter, _pad_walk,
            _pad_confusion, _pad_tensor_util, _pad_ema, _pad_match, _pad_lambda_table]


# ---------------------------------------------------------------------- public API
def generate_file(seed: int, index: int, min_lines: int = 100, max_lines: int = 600) -> tuple[str, str, tuple[str, ...]]:
    """Return ``(kind, text, planted)`` for file ``index`` of the corpus with ``seed``."""
    rng = random.Random(f"{seed}:{index}")
    kind = rng.choices(list(KINDS), weights=list(KINDS.values()))[0]
    target = rng.randint(min_lines + 20, max_lines - 40)
    gen = _FileGen(rng, index, kind)
    text = gen.build(target)
    ast.parse(text)  # the corpus must be valid Python
    return kind, text, tuple(gen.planted)


def generate_corpus(out_dir, n_files: int = 200, seed: int = 0, min_lines: int = 100,
                    max_lines: int = 600) -> list[CorpusFile]:
    """Write ``n_files`` scripts (in a few sub-packages) under ``out_dir``; return their records."""
    out = Path(out_dir)
    files: list[CorpusFile] = []
    for i in range(n_files):
        kind, text, planted = generate_file(seed, i, min_lines, max_lines)
        sub = out / f"pkg{i % 8}"
        sub.mkdir(parents=True, exist_ok=True)
        path = sub / f"{kind}_{i:04d}.py"
        path.write_text(text, encoding="utf-8")
        files.append(CorpusFile(path, kind, text.count("\n"), planted))
    for d in sorted({f.path.parent for f in files}):
        (d / "__init__.py").write_text("", encoding="utf-8")
    return files


if __name__ == "__main__":  # quick look: python bench/corpus.py OUT_DIR [N] [SEED]
    import sys

    target_dir = sys.argv[1] if len(sys.argv) > 1 else "corpus_out"
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    s = int(sys.argv[3]) if len(sys.argv) > 3 else 0
    recs = generate_corpus(target_dir, n, s)
    print(f"{len(recs)} files, {sum(r.lines for r in recs)} lines, "
          f"{sum(1 for r in recs if r.planted)} with planted bugs -> {target_dir}")
