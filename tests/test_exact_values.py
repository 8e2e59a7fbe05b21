"""An error is a proof, and what Python and the standard library guarantee keeps it one: a
``range`` counter is an int, ``math`` gives numbers, ``OrderedDict`` reads the pairs it is given
(so ``nn.Sequential(OrderedDict(...))`` runs its layers in order), a list of one element yields
that element, ``str.format`` and f-strings of constants are constants, either of two numbers is a
number, a tensor made from a list of numbers is a plain leaf, and ``zip(*rows)`` gives the columns.
Torch's own rules keep shapes: a comparison gives a mask, indexing by which selects rows; a
DataLoader's default collate stacks each tensor of an item (a dict's too) along a new first dim,
with worker processes too (which send items that carry no graph only).
A dict of known keys passed with ``**`` binds them. Loops run pass by pass where their items are
known: a short ``range`` (what each pass makes is its own: two models, not one), a dict whose keys
are all known, a list known item by item; a comprehension over such a list makes one known item by
item; ``xs[-1]`` after appends is the last value appended. An ``nn.ParameterList`` holds parameters
its module registers. A dict's subclass that only reads its items as attributes
(``__getattr__ = dict.__getitem__``, ``self.__dict__ = self``) is that dict, and a dict comprehension over known keys (or ``update`` with one) is known key by
key. ``copy.deepcopy`` of a project's module copies its parameters too; ``apply`` calls its
function children first, ``str.split`` of a constant gives its parts, ``sum`` of known items their
broadcast, ``type(d)(pairs)`` another of d's dict class, torch's ``_Loss`` is a module, ``model.train()`` calls each child's own ``train``, and a layer's class name is known. Indexing by a tensor (``x[:, idx]``) copies into a contiguous tensor, so a
reshape of what is computed from it is a view. A list comprehension over ``enumerate`` of a known list,
and a ``range`` with a step, are known item by item (``xs[i] = v`` replaces one). A name bound only in an if/elif chain
on a setting that never changes holds no earlier iteration's value. Each program raises under real torch, and GradGuard reports it there as an
error, not as a maybe; their clean twins get no error."""
from __future__ import annotations

import textwrap

import pytest

import torchrun

from gradguard.analysis import analyze_source

PROGRAMS = {
    "layers registered by add_module under ``\"gcl_%d\" % i`` and called through ``self._modules``: in place on the leaf positions": ("GG108", 9, """\
        import torch
        import torch.nn as nn
        class Layer(nn.Module):
            def __init__(self):
                super().__init__()
                self.mlp = nn.Linear(3, 3)
            def forward(self, h, coord):
                agg = self.mlp(h)
                coord += agg
                return h, coord
        class Net(nn.Module):
            def __init__(self, n_layers=2):
                super().__init__()
                self.n_layers = n_layers
                for i in range(0, n_layers):
                    self.add_module("gcl_%d" % i, Layer())
            def forward(self, h, x):
                for i in range(0, self.n_layers):
                    h, x = self._modules["gcl_%d" % i](h, x)
                return h, x
        pos = torch.randn(4, 3).clone().requires_grad_(True)
        h, x = Net()(torch.randn(4, 3), pos)
        x.sum().backward()
        """),
    "a loss stored by ``losses.update(loss_cls=...)`` is read back by its key: of a copy made by torch.tensor, no graph": ("GG104", 12, """\
        import warnings
        import torch
        warnings.simplefilter("ignore")
        head = torch.nn.Linear(4, 3)
        def loss_of(x, y):
            losses = dict()
            losses.update(loss_cls=torch.nn.functional.cross_entropy(torch.tensor(head(x)), y))
            return losses
        losses = loss_of(torch.randn(5, 4), torch.randint(0, 3, (5,)))
        log_vars = {k: v.mean() for k, v in losses.items()}
        loss = sum(v for k, v in log_vars.items() if "loss" in k)
        loss.backward()
        """),
    "nn.Identity returns its input itself: ``+=`` on what it returned writes the Tanh output TanhBackward saved": ("GG103", 7, """\
        import torch
        import torch.nn as nn
        enc, project_in, pos = nn.Sequential(nn.Linear(3, 4), nn.Tanh()), nn.Identity(), nn.Embedding(5, 4)
        x = enc(torch.randn(5, 3))
        x = project_in(x)
        x += pos(torch.arange(5))
        x.sum().backward()
        """),
    "a spectral-normed layer's weight is made from weight_orig by each forward, which that saves: a step spoils it": ("GG103", 10, """\
        import torch
        from torch.nn.utils import spectral_norm
        model = spectral_norm(torch.nn.Linear(2, 5))
        opt1, opt2 = torch.optim.SGD(model.parameters(), lr=0.1), torch.optim.SGD(model.parameters(), lr=0.1)
        for x in [torch.randn(7, 2) for _ in range(2)]:
            loss = model(x).abs().mean()
            opt1.zero_grad()
            loss.backward(retain_graph=True)
            opt1.step()
            loss.backward()
            opt2.step()
        """),
    "an update run when a counter the loop increments reaches its bound: the Q step spoils the policy loss's graph": ("GG103", 18, """\
        import torch
        import torch.nn as nn
        policy, q = nn.Linear(3, 2), nn.Sequential(nn.Linear(5, 4), nn.ReLU(), nn.Linear(4, 1))
        pi_opt, q_opt = torch.optim.Adam(policy.parameters()), torch.optim.Adam(q.parameters())
        ep_len, max_ep_len = 0, 3
        for t in range(8):
            ep_len += 1
            if ep_len == max_ep_len:
                for _ in range(ep_len):
                    obs = torch.randn(4, 3)
                    q_pi = q(torch.cat([obs, policy(obs)], 1))
                    pi_loss = -q_pi.mean()
                    q_loss = (q(torch.cat([obs, torch.randn(4, 2)], 1)) ** 2).mean()
                    q_opt.zero_grad()
                    q_loss.backward()
                    q_opt.step()
                    pi_opt.zero_grad()
                    pi_loss.backward()
                    pi_opt.step()
                ep_len = 0
        """),
    "a residual added in place (``h.add_(attn(ln(h)))``): the norm saved h, which the tensor now ends in": ("GG103", 17, """\
        import torch
        import torch.nn as nn
        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.ln = nn.LayerNorm(4)
                self.attn = nn.Linear(4, 4)
            def forward(self, h):
                h.add_(self.attn(self.ln(h)))
                return h
        blocks = nn.ModuleList([Block(), Block()])
        emb = nn.Embedding(10, 4)
        h = emb(torch.randint(0, 10, (3,)))
        kept = h
        for block in blocks:
            h = block(h)
        kept.sum().backward()
        """),
    "a batch picked by a slice of randperm has that many rows: its per-sample loss is no scalar": ("GG105", 12, """\
        import torch
        net = torch.nn.Linear(8, 1)
        features, prices = torch.randn(200, 8), torch.randn(200, 1)
        opt = torch.optim.SGD(net.parameters(), lr=0.01)
        for epoch in range(2):
            perm = torch.randperm(200)
            for start in range(0, 200, 32):
                idx = perm[start:start + 32]
                out = net(features[idx])
                loss = (out - prices[idx]) ** 2
                opt.zero_grad()
                loss.backward()
                opt.step()
        """),
    "a Sequential subclass built by super().__init__(*layers) runs them: in-place dropout over the ReLU output it saved": ("GG103", 12, """\
        import torch
        class MLP(torch.nn.Sequential):
            def __init__(self, sizes, inplace):
                layers = []
                for a, b in zip(sizes, sizes[1:]):
                    layers.append(torch.nn.Linear(a, b))
                    layers.append(torch.nn.ReLU(inplace=inplace))
                    layers.append(torch.nn.Dropout(0.5, inplace=inplace))
                super().__init__(*layers)
        torch.manual_seed(0)
        MLP([3, 3, 3], inplace=False)(torch.rand(3)).sum().backward()
        MLP([3, 3, 3], inplace=True)(torch.rand(3)).sum().backward()
        """),
    "modules kept under tuple keys of a counter: the generator step spoils the discriminator loss's graph": ("GG103", 20, """\
        import torch
        import torch.nn as nn
        class Decoder(nn.Module):
            def __init__(self):
                super().__init__()
                self.convs = {}
                for i in range(4, -1, -1):
                    self.convs[("fc", i)] = nn.Linear(3, 3)
                self.decoder = nn.ModuleList(list(self.convs.values()))
            def forward(self, x):
                for i in range(4, -1, -1):
                    x = self.convs[("fc", i)](x)
                return x
        dec, disc = Decoder(), nn.Linear(3, 1)
        opt_g, opt_d = torch.optim.Adam(dec.parameters()), torch.optim.Adam(disc.parameters())
        fake = dec(torch.randn(4, 3))
        loss_g, loss_d = disc(fake).mean(), -disc(fake).mean()
        loss_g.backward(retain_graph=True)
        opt_g.step()
        loss_d.backward()
        """),
    "iterating a tensor yields its rows: one picked column of each is no scalar": ("GG105", 13, """\
        import torch
        import torch.nn as nn
        class Pick:
            def __init__(self, category):
                self.category = category
            def __call__(self, model_output):
                if len(model_output.shape) == 1:
                    return model_output[self.category]
                return model_output[:, self.category]
        net = nn.Conv2d(3, 4, 3, padding=1)
        outputs = net(torch.randn(2, 3, 5, 5))
        loss = sum([target(output) for target, output in zip([Pick(1), Pick(2)], outputs)])
        loss.backward()
        """),
    "item 0 of a PackedSequence is its rows: of a frozen decoder, no graph": ("GG104", 13, """\
        import torch
        import torch.nn as nn
        from torch.nn.utils.rnn import pack_padded_sequence
        decoder = nn.Linear(4, 5)
        for p in decoder.parameters():
            p.requires_grad = False
        scores = decoder(torch.randn(3, 6, 4))
        targets = torch.randint(0, 5, (3, 6))
        lengths = [6, 5, 3]
        scores = pack_padded_sequence(scores, lengths, batch_first=True)[0]
        targets = pack_padded_sequence(targets, lengths, batch_first=True)[0]
        loss = nn.functional.cross_entropy(scores, targets)
        loss.backward()
        """),
    "an LSTM over packed sequences whose state is carried across batches: the padded output walks the freed graph": ("GG101", 15, """\
        import torch
        import torch.nn as nn
        from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
        lstm = nn.LSTM(4, 4)
        fc = nn.Linear(4, 1)
        opt = torch.optim.SGD(list(lstm.parameters()) + list(fc.parameters()), lr=0.1)
        h = (torch.zeros(1, 3, 4), torch.zeros(1, 3, 4))
        for step in range(3):
            x = torch.randn(5, 3, 4)
            packed = pack_padded_sequence(x, torch.tensor([5, 4, 3]))
            out, h = lstm(packed, h)
            padded, lengths = pad_packed_sequence(out)
            loss = fc(padded).pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        """),
    "a detector's grid made with torch.meshgrid (followed, no grad) added into its sigmoid output in place": ("GG103", 25, """\
        import torch
        import torch.nn as nn
        m = nn.ModuleList(nn.Conv2d(c, 6, 1) for c in (4, 8))
        grid = [torch.zeros(1)] * 2
        def make_grid(nx=20, ny=20):
            yv, xv = torch.meshgrid([torch.arange(ny), torch.arange(nx)], indexing="ij")
            return torch.stack((xv, yv), 2).view((1, 1, ny, nx, 2)).float()
        def detect(x):
            z = []
            for i in range(2):
                x[i] = m[i](x[i])
                bs, _, ny, nx = x[i].shape
                x[i] = x[i].view(bs, 1, 6, ny, nx).permute(0, 1, 3, 4, 2).contiguous()
                if grid[i].shape[2:4] != x[i].shape[2:4]:
                    grid[i] = make_grid(nx, ny)
                y = x[i].sigmoid()
                y[..., 0:2] = (y[..., 0:2] * 2.0 - 0.5 + grid[i]) * 8
                z.append(y.view(bs, -1, 6))
            return torch.cat(z, 1), x
        img = torch.rand(1, 4, 4, 4, requires_grad=True)
        p3 = img
        p4 = torch.cat([img, img], 1)
        pred = detect([p3, p4])[0]
        loss = pred[..., 4].max()
        loss.backward()
        """),
    "an op's output moved to the CPU it is on is itself: adding to it in place spoils what exp saved": ("GG103", 7, """\
        import torch
        dev = "cpu"
        w = torch.randn(3, requires_grad=True)
        y = torch.exp(w.to(dev))
        z = y.cpu()
        z.add_(1)
        y.sum().backward()
        """),
    "a ModuleList sliced `[:-1]` holds its first blocks as they are: the first one's ReLU output is then added to in place": ("GG103", 25, """\
        import torch
        import torch.nn as nn
        class Conv(nn.Module):
            def __init__(self, act=nn.ReLU()):
                super().__init__()
                self.lin = nn.Linear(4, 4)
                self.act = act
            def forward(self, x):
                out = self.lin(x)
                if self.act is not None:
                    out = self.act(out)
                out += x
                return out
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.convs = nn.ModuleList()
                self.convs.append(Conv())
                self.convs.append(Conv(act=None))
            def forward(self, x):
                for conv in self.convs[:-1]:
                    x = conv(x)
                return self.convs[-1](x)
        loss = Net()(torch.randn(2, 4)).sum()
        loss.backward()
        """),
    "ids made on the CPU and `.cpu()`-ed are the same ids: masking them spoils what the embedding saved": ("GG103", 7, """\
        import torch
        emb = torch.nn.Embedding(10, 4)
        ids = torch.cat([torch.full((2, 1), 1), torch.randint(2, 10, (2, 3))], dim=1)
        out = emb(ids).sum()
        masked = ids.cpu()
        masked[:, 1] = 3
        out.backward()
        """),
    "`.cpu()` of a leaf made on the CPU is that leaf: an in-place write into it is refused": ("GG108", 5, """\
        import torch
        v = torch.randn(3, requires_grad=True).cpu()
        loss = (v * 3).sum()
        loss.backward()
        v.add_(1)
        """),
    "a loss weight set once in __init__ to 0, tested in the training loop: that branch never adds the only trained term": ("GG104", 19, """\
        import torch
        class Engine:
            def __init__(self, weight_t=1.0, weight_x=1.0):
                self.backbone = torch.nn.Linear(4, 4).requires_grad_(False)
                self.classifier = torch.nn.Linear(4, 2)
                self.weight_t, self.weight_x = weight_t, weight_x
            def forward_backward(self, x, y):
                features = self.backbone(x)
                loss = 0
                if self.weight_t > 0:
                    loss += self.weight_t * features.pow(2).mean()
                if self.weight_x > 0:
                    loss += self.weight_x * torch.nn.functional.cross_entropy(self.classifier(features), y)
                return loss
        engine = Engine(weight_x=0.0)
        data = [(torch.randn(8, 4), torch.randint(0, 2, (8,))) for _ in range(3)]
        for x, y in data:
            loss = engine.forward_backward(x, y)
            loss.backward()
        """),
    "a detector decodes its sigmoid output in place unless exporting to ONNX, which an eager run never is": ("GG103", 12, """\
        import torch
        conv = torch.nn.Conv2d(3, 6, 1)
        def detect(x):
            y = conv(x).sigmoid()
            if not torch.onnx.is_in_onnx_export():
                y[:, 0:2] = y[:, 0:2] * 2.0 - 0.5
            else:
                y = torch.cat((y[:, 0:2] * 2.0 - 0.5, y[:, 2:]), 1)
            return y
        img = torch.rand(1, 3, 4, 4, requires_grad=True)
        loss = detect(img)[:, 4].max()
        loss.backward()
        """),
    "a no-grad output indexed by categories numpy picked: the index adds no grad, the loss has none": ("GG104", 13, """\
        import numpy as np
        import torch
        net = torch.nn.Linear(4, 3)
        class Target:
            def __init__(self, category):
                self.category = category
            def __call__(self, out):
                return out[:, self.category]
        with torch.no_grad():
            outputs = net(torch.randn(2, 4))
        targets = [Target(c) for c in np.argmax(outputs.numpy(), axis=-1)]
        loss = sum([t(o.unsqueeze(0)) for t, o in zip(targets, outputs)]).sum()
        loss.backward()
        """),
    "a DataParallel-like gather of (logits, loss) pairs, a tuple made item by item: the losses stacked into a vector": ("GG105", 20, """\
        import torch
        import torch.nn as nn
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 3)
            def forward(self, x, y):
                logits = self.fc(x)
                return logits, nn.functional.cross_entropy(logits, y)
        def gather(outputs):
            first = outputs[0]
            if isinstance(first, torch.Tensor):
                if first.dim() == 0:
                    return torch.stack(outputs)
                return torch.cat(outputs, dim=0)
            return type(first)(gather([o[i] for o in outputs]) for i in range(len(first)))
        net = Net()
        x, y = torch.randn(8, 4), torch.randint(0, 3, (8,))
        logits, loss = gather([net(a, b) for a, b in zip(x.chunk(2), y.chunk(2))])
        loss.backward()
        """),
    "a world model's reward read as an Independent Normal's mean: the discount row written after a return saved its slice": ("GG103", 15, """\
        import torch
        import torch.distributions as td
        head = torch.nn.Linear(4, 1)
        def reward_model(feat):
            return td.independent.Independent(td.Normal(head(feat), 1.0), 1)
        def compute_return(reward, discount):
            return reward + discount * reward
        feat = torch.randn(5, 3, 4)
        imag_reward = reward_model(feat).mean
        discount_arr = 0.99 * torch.ones_like(imag_reward)
        returns = compute_return(imag_reward[:-1], discount_arr[:-1])
        discount_arr[0] = 1
        discount = torch.cumprod(discount_arr[:-1], 0)
        actor_loss = -torch.mean(discount * returns)
        actor_loss.backward()
        """),
    "a Normal's stddev is its scale: two backwards through the exp it was made of": ("GG101", 8, """\
        import torch
        from torch.distributions import Normal
        log_std = torch.zeros(3, requires_grad=True)
        dist = Normal(torch.zeros(3), log_std.exp())
        std = dist.stddev
        std.sum().backward()
        loss = (2 * std).sum()
        loss.backward()
        """),
    "a list known item by item zipped with its names: each pass converts its own item (the last requires grad)": ("GG107", 6, """\
        import numpy as np
        import torch
        w = torch.randn(5, requires_grad=True)
        kept = [(w * 2).detach().numpy(), (w * 3).detach().numpy(), w * 4]
        for name, x in zip(("a", "b", "c"), kept):
            counts, edges = np.histogram(x, 4)
        """),
    "a helper makes the caller's mask require grad in place: the caller's later write into a view of it is refused": ("GG108", 11, """\
        import torch
        def importance(mask):
            mask.requires_grad_(True)
            loss = (mask * torch.randn(4)).sum()
            loss.backward()
            return mask.grad.abs()
        mask = torch.ones(4)
        for step in range(2):
            scores = importance(mask)
            flat = mask.view(-1)
            flat[scores.argmin()] = 0.0
        """),
    "parameter groups given as a list of dicts: the optimizer steps each group's parameters, saved by the retained graph": ("GG103", 17, """\
        import torch
        import torch.nn as nn
        D = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
        G = nn.Linear(3, 4)
        w_D, b_D = [], []
        for layer in D:
            if type(layer) == nn.Linear:
                w_D.append(layer.weight)
                b_D.append(layer.bias)
        opt_D = torch.optim.SGD([{"params": w_D, "lr": 0.1}, {"params": b_D, "lr": 0.2}], lr=0.1)
        feature = G(torch.randn(5, 3))
        d_loss = D(feature).mean()
        g_loss = -d_loss + feature.pow(2).mean()
        opt_D.zero_grad()
        d_loss.backward(retain_graph=True)
        opt_D.step()
        g_loss.backward()
        """),
    "a Sequential's children filtered by isinstance: a Sequential is no Linear, so the body is known and exp's result is written": ("GG103", 16, """\
        import torch
        import torch.nn as nn
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                body = []
                for m in nn.Sequential(nn.Linear(4, 8), nn.Sequential(nn.Tanh(), nn.Linear(8, 8)), nn.Linear(8, 2)).children():
                    if not isinstance(m, nn.Linear) or m.out_features != 2:
                        body.append(m)
                self.body = nn.Sequential(*body)
            def forward(self, x):
                return self.body(x)
        net = Net()
        out = torch.exp(net(torch.randn(3, 4)))
        out[0] = 0.0
        out.sum().backward()
        """),
    "a view of a layer's bias written in place where no backward is (YOLO's bias initialisation)": ("GG108", 13, """\
        import math
        import torch
        import torch.nn as nn
        class Detect(nn.Module):
            def __init__(self, nc=2, ch=(8, 16)):
                super().__init__()
                self.na, self.nc = 3, nc
                self.m = nn.ModuleList(nn.Conv2d(x, self.na * (nc + 5), 1) for x in ch)
                self.stride = torch.tensor([8., 16.])
        det = Detect()
        for mi, s in zip(det.m, det.stride):
            b = mi.bias.view(det.na, -1)
            b[:, 4] += math.log(8 / (640 / s) ** 2)
        """),
    "every parameter frozen by a name test that no name passes: the loss requires no grad": ("GG104", 20, """\
        import torch
        import torch.nn as nn
        class Encoder(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv1 = nn.Conv2d(3, 8, 3)
                self.VPT = nn.Parameter(torch.randn(2, 8))
                self.head = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 4))
            def forward(self, x):
                h = self.conv1(x).mean((2, 3)) + self.VPT.sum(0)
                return self.head(h)
        model = Encoder()
        wanted = [f"layer.{i}." for i in range(2, 4)] + ["prompt_learner"]
        for name, param in model.named_parameters():
            if not any(w in name for w in wanted):
                param.requires_grad_(False)
        out = model(torch.randn(2, 3, 8, 8))
        loss = out.pow(2).mean()
        print(name)
        loss.backward()
        """),
    "layers appended to a ModuleList by a helper the constructor calls: the caller's list grew": ("GG103", 20, """\
        import torch
        import torch.nn as nn
        class Block(nn.Module):
            def __init__(self, activation="ReLU", dims=2):
                super().__init__()
                block = nn.ModuleList()
                self.add_if_not_none(block, getattr(nn, "Conv{}d".format(dims))(3, 4, 3))
                self.add_if_not_none(block, getattr(nn, activation)() if activation else None)
                self.block = nn.Sequential(*block)
            def forward(self, x):
                return self.block(x)
            @staticmethod
            def add_if_not_none(module_list, module):
                if module is not None:
                    module_list.append(module)
        m = Block()
        y = m(torch.randn(1, 3, 8, 8))
        y += 1
        loss = y.sum()
        loss.backward()
        """),
    "a project's optimizer writing each parameter of its ``param_groups`` in place: the retained graph saved them": ("GG103", 16, """\
        import torch
        class Perturb(torch.optim.Optimizer):
            def __init__(self, params, rho=0.05):
                super().__init__(params, dict(rho=rho))
            @torch.no_grad()
            def first_step(self):
                for group in self.param_groups:
                    for p in group["params"]:
                        if p.grad is not None:
                            p.add_(p.grad * group["rho"])
        net = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.Linear(3, 3))
        opt = Perturb(net.parameters())
        loss = net(torch.randn(2, 3)).pow(2).sum()
        loss.backward(retain_graph=True)
        opt.first_step()
        loss.backward()
        """),
    "a loop over every parameter writing each in place: the retained graph saved the weights": ("GG103", 8, """\
        import torch
        net = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.Linear(3, 3))
        loss = net(torch.randn(2, 3)).pow(2).sum()
        loss.backward(retain_graph=True)
        with torch.no_grad():
            for p in net.parameters():
                p.add_(p.grad * 0.1)
        loss.backward()
        """),
    "``p -= lr * p.grad`` over every parameter: the retained graph saved the weights": ("GG103", 8, """\
        import torch
        net = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.Linear(3, 3))
        loss = net(torch.randn(2, 3)).pow(2).sum()
        loss.backward(retain_graph=True)
        with torch.no_grad():
            for p in net.parameters():
                p -= 0.1 * p.grad
        loss.backward()
        """),
    "``nn.Embedding.from_pretrained(w)`` is frozen unless told otherwise: a loss of it alone has no graph": ("GG104", 5, """\
        import torch
        import torch.nn as nn
        emb = nn.Embedding.from_pretrained(torch.randn(5, 3))
        loss = emb(torch.tensor([0, 1])).pow(2).sum()
        loss.backward()
        """),
    "``scaler.scale(loss)`` keeps the loss's graph: the same loss scaled and backwarded twice": ("GG101", 6, """\
        import torch
        w = torch.randn(3, requires_grad=True)
        scaler = torch.amp.GradScaler("cpu", enabled=False)
        loss = (w * w).sum()
        scaler.scale(loss).backward()
        scaler.scale(loss).backward()
        """),
    "``scaler.step(opt)`` is the optimizer's step: the retained graph saved the weights it changed": ("GG103", 10, """\
        import torch
        net = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.Linear(3, 3))
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        scaler = torch.amp.GradScaler("cpu", enabled=False)
        loss = net(torch.randn(2, 3)).pow(2).sum()
        scaler.scale(loss).backward(retain_graph=True)
        scaler.step(opt)
        scaler.update()
        opt.zero_grad()
        scaler.scale(loss).backward()
        """),
    "``hasattr(self, \"neck\")`` of a module built without one is False: only the frozen backbone runs": ("GG104", 18, """\
        import torch
        import torch.nn as nn
        class Detector(nn.Module):
            def __init__(self, neck=None):
                super().__init__()
                self.backbone = nn.Linear(3, 3)
                if neck is not None:
                    self.neck = neck
                for p in self.backbone.parameters():
                    p.requires_grad = False
            def forward(self, x):
                x = self.backbone(x)
                if hasattr(self, "neck"):
                    x = self.neck(x)
                return x.sum()
        det = Detector()
        loss = det(torch.randn(2, 3))
        loss.backward()
        """),
    "``zip(*(x.chunk(2) for x in inputs))``: the call runs the generator first, each input's two chunks known": ("GG105", 9, """\
        import torch
        w = torch.randn(3, requires_grad=True)
        def replica(a, b):
            return (a * w).sum() + (b * w).mean()
        inputs = (torch.randn(4, 3), torch.randn(4, 3))
        chunks = zip(*(x.chunk(2) for x in inputs))
        losses = torch.stack([replica(*part) for part in chunks])
        print(losses.shape)
        losses.backward()
        """),
    "``x.requires_grad`` of a leaf that requires grad is True: the flag kept in a list freezes nothing": ("GG101", 8, """\
        import torch
        w = torch.randn(3, requires_grad=True)
        flags = [w.requires_grad]
        if not flags[0]:
            w.requires_grad_(False)
        y = (w * w).sum()
        y.backward()
        y.backward()
        """),
    "a bare ``torch.set_grad_enabled(False)`` in a function called last epoch: this epoch's loss has no graph": ("GG104", 14, """\
        import torch
        w = torch.randn(3, requires_grad=True)
        def evaluate(x):
            torch.set_grad_enabled(False)
            return (x * w).sum().item()
        def train(x):
            loss = (x * w).sum()
            return loss
        x = torch.randn(3)
        for epoch in range(2):
            loss = train(x)
            evaluate(x)
            loss = train(x)
            loss.backward()
        """),
    "a weighted sum over the losses a dict holds, filtered by ``if k in losses``: a vector stacked of two": ("GG105", 7, """\
        import torch
        w = torch.randn(3, requires_grad=True)
        losses = {"a": (w * w).sum(), "b": torch.stack([w.sum(), w.mean()])}
        weights = {"a": 1.0, "b": 0.5, "c": 2.0}
        total = sum([v * losses[k] for k, v in weights.items() if k in losses])
        print(total.shape)
        total.backward()
        """),
    "two log-probs of one ``Bernoulli(probs)`` of a leaf: the logits it took once, freed by the first backward": ("GG101", 7, """\
        import torch
        p = torch.tensor(0.3, requires_grad=True)
        pi = torch.distributions.Bernoulli(probs=p)
        l1 = pi.log_prob(torch.tensor(1.0))
        l2 = pi.log_prob(torch.tensor(0.0))
        l1.backward()
        l2.backward()
        """),
    "two log-probs of one ``Categorical(logits)`` of a leaf: its normalised logits, taken once": ("GG101", 7, """\
        import torch
        logits = torch.zeros(4, requires_grad=True)
        dist = torch.distributions.Categorical(logits=logits)
        l1 = dist.log_prob(torch.tensor(1))
        l2 = dist.log_prob(torch.tensor(2))
        l1.backward()
        l2.backward()
        """),
    "``isinstance(ids, int)`` of a list of ids is False: the list's two ids give two losses stacked": ("GG105", 9, """\
        import torch
        def ids(n):
            if isinstance(n, int):
                n = list(range(n))
            return n
        gpus = ids([0, 1])
        w = torch.randn(3, requires_grad=True)
        y = torch.stack([(w * w).sum() for _ in gpus])
        y.backward()
        """),
    "a class made by ``type(name, bases, dict)``: its static method's loss walked twice": ("GG101", 8, """\
        import torch
        def run(x):
            return (x * x).sum()
        Tools = type("Tools", (), {"run": staticmethod(run), "scale": 2.0})
        w = torch.randn(3, requires_grad=True)
        loss = Tools.run(w) * Tools.scale
        loss.backward()
        loss.backward()
        """),
    "a tied output layer saved the embedding's weight, which a later lookup with max_norm rescales in place": ("GG103", 8, """\
        import torch
        import torch.nn as nn
        emb = nn.Embedding(20, 4, max_norm=1.0)
        h = torch.randn(3, 4, requires_grad=True)
        logits = h @ emb.weight.t()
        e = emb(torch.tensor([1, 2]))
        loss = logits.sum() + e.sum()
        loss.backward()
        """),
    "``F.embedding(ids, w, max_norm=...)`` after a product saved w": ("GG103", 6, """\
        import torch
        import torch.nn.functional as F
        w = torch.randn(20, 4, requires_grad=True)
        y = w * w
        e = F.embedding(torch.tensor([1, 2]), w, None, 2.0)
        (y.sum() + e.sum()).backward()
        """),
    "a state carried across batches: the last step's update, which no step after it used, saved the weights a step changed": ("GG103", 18, """\
        import torch
        w = torch.nn.Parameter(torch.randn(3, 3))
        u = torch.nn.Parameter(torch.randn(3, 3))
        opt = torch.optim.SGD([w, u], lr=0.1)
        v, i = None, None
        for batch in range(3):
            x = torch.randn(4, 3)
            if v is None:
                v = torch.zeros(4, 3, requires_grad=True)
                i = torch.zeros(4, 3)
            total = 0
            for t in range(5):
                v = v * 0.9 + i
                i = i * 0.5 + torch.nn.functional.linear(torch.sigmoid(v), w)
                total = total + torch.tanh(v @ u)
            loss = total.sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
        """),
    "a state carried across batches whose last step's update saved nothing a step changed: the freed steps before it": ("GG101", 18, """\
        import torch
        w = torch.nn.Parameter(torch.randn(3, 3))
        u = torch.nn.Parameter(torch.randn(3, 3))
        opt = torch.optim.SGD([w, u], lr=0.1)
        v, i = None, None
        for batch in range(3):
            x = torch.randn(4, 3)
            if v is None:
                v = torch.zeros(4, 3, requires_grad=True)
                i = torch.zeros(4, 3)
            total = 0
            for t in range(5):
                v = v * 0.9 + i
                i = i * 0.5 + torch.nn.functional.linear(x, w)
                total = total + torch.tanh(v @ u)
            loss = total.sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
        """),
    "every result of ``map(torch.exp, xs)`` stacked after one was written in place": ("GG103", 6, """\
        import torch
        w = torch.randn(3, requires_grad=True)
        v = torch.randn(3, requires_grad=True)
        hs = list(map(torch.exp, [w, v]))
        hs[0].add_(1)
        torch.stack(hs).sum().backward()
        """),
    "an LSTM's output averaged over time only (one loss per sequence)": ("GG105", 6, """\
        import torch
        import torch.nn as nn
        lstm = nn.LSTM(3, 4, batch_first=True)
        out, (h, c) = lstm(torch.randn(2, 5, 3))
        loss = out.pow(2).mean(dim=(1, 2))
        loss.backward()
        """),
    "a named tuple's ``_replace`` keeps the other fields": ("GG103", 8, """\
        from collections import namedtuple
        import torch
        State = namedtuple("State", "h c")
        w = torch.randn(3, requires_grad=True)
        s = State(torch.exp(w), None)
        s = s._replace(c=1)
        s.h.add_(1)
        s.h.sum().backward()
        """),
    "a shallow copy of an object (``copy.copy(s)``) holds the same tensor": ("GG103", 10, """\
        import copy
        import torch
        class S:
            def __init__(self, h):
                self.h = h
        w = torch.randn(3, requires_grad=True)
        s = S(torch.exp(w))
        s2 = copy.copy(s)
        s2.h.add_(1)
        s.h.sum().backward()
        """),
    "attributes set by ``setattr(self, k, v)`` over the keywords, read back (``b.act``)": ("GG103", 11, """\
        import torch
        import torch.nn as nn
        class Batch:
            def __init__(self, **kwargs):
                for k, v in kwargs.items():
                    setattr(self, k, v)
        net = nn.Linear(3, 3)
        out = torch.sigmoid(net(torch.randn(2, 3)))
        b = Batch(act=out, n=3)
        b.act.add_(1)
        out.sum().backward()
        """),
    "both updates run at their default frequencies (``parser.parse_args(args=[])``, as notebooks call it)": ("GG103", 20, """\
        import argparse
        import torch
        import torch.nn as nn
        parser = argparse.ArgumentParser(description="gan")
        parser.add_argument("--disc_freq", default=1, type=int)
        parser.add_argument("--gen-freq", default="1", type=int)
        parser.add_argument("--use_cuda", action="store_true")
        opt = parser.parse_args(args=[])
        d = nn.Linear(3, 1)
        g = nn.Linear(3, 3)
        opt_d = torch.optim.SGD(d.parameters(), lr=0.1)
        for it in range(3):
            fake = g(torch.randn(2, 3))
            score = d(fake)
            if it % opt.disc_freq == 0:
                score.mean().backward(retain_graph=True)
                opt_d.step()
            if it % opt.gen_freq == 0 and not opt.use_cuda:
                loss = (-score).mean()
                loss.backward()
        """),
    "a staticmethod called on the instance (``self.to_dict(...)``) gets no ``self``": ("GG107", 9, """\
        import numpy as np
        import torch
        import torch.nn as nn
        class Plan:
            def __init__(self):
                self.net = nn.Linear(3, 1)
            @staticmethod
            def to_dict(metric, name="Custom"):
                metric = np.array(metric)
                return {name: metric}
            def test(self):
                out = self.net(torch.randn(4, 3)).mean()
                return self.to_dict(out)
        Plan().test()
        """),
    "a weight of one of a list of blocks made at one site written in place (``enc.layer[i].output.dense.weight[:, j] -= ...``)": ("GG108", 17, """\
        import torch
        import torch.nn as nn
        class Out(nn.Module):
            def __init__(self):
                super().__init__()
                self.dense = nn.Linear(4, 4)
        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.output = Out()
        class Encoder(nn.Module):
            def __init__(self, n):
                super().__init__()
                self.layer = nn.ModuleList([Block() for _ in range(n)])
        enc = Encoder(2)
        for layer, pos in [(0, 1), (1, 2)]:
            enc.layer[layer].output.dense.weight[:, pos] -= 1.0
        """),
    "a loss function called on a tuple one branch made longer (``inputs += target``), each length walks the saved graph": ("GG103", 16, """\
        import torch
        import torch.nn as nn
        fc = nn.Linear(4, 2)
        def embed(x):
            out = fc(x)
            out /= out.pow(2).sum(1, keepdim=True).sqrt()
            return out
        def loss_fn(a, p, size_average=True):
            d = (a - p).pow(2).sum(1)
            return d.mean() if size_average else d.sum()
        target = [] if torch.rand(1).item() > 2 else [True]
        inputs = (embed(torch.randn(3, 4)), embed(torch.randn(3, 4)))
        if len(target) > 0:
            inputs += (target[0],)
        loss = loss_fn(*inputs)
        loss.backward()
        """),
    "an optimizer of the parameters that require grad (``filter(lambda p: p.requires_grad, ...)``) steps between two backwards": ("GG103", 13, """\
        import torch
        import torch.nn as nn
        g = nn.Linear(3, 3)
        d = nn.Linear(3, 1)
        optim_G = torch.optim.Adamax(filter(lambda p: p.requires_grad, g.parameters()), lr=0.001)
        x = torch.randn(2, 3, requires_grad=True)
        pred = g(x)
        out = d(pred)
        loss = out.sum()
        loss.backward(retain_graph=True)
        optim_G.step()
        loss2 = (out * 2).sum()
        loss2.backward()
        """),
    "the function form of an in-place activation on an input that requires grad (``F.relu(x, inplace=True)``)": ("GG108", 4, """\
        import torch
        import torch.nn.functional as F
        def features(x):
            x = F.relu(x, inplace=True)
            return x
        x = torch.randn(4, 3, requires_grad=True)
        out = features(x)
        """),
    "``torch.sigmoid_(z)`` on a result its exp saved": ("GG103", 6, """\
        import torch
        x = torch.randn(3, requires_grad=True)
        z = torch.exp(x)
        torch.sigmoid_(z)
        loss = z.sum()
        loss.backward()
        """),
    "attributes set from keywords (``self.__dict__.update(kwargs)``, ``vars(self).update(d)``)": ("GG103", 14, """\
        import torch
        import torch.nn as nn
        class Batch:
            def __init__(self, **kwargs):
                self.__dict__.update(kwargs)
        class Rec:
            def __init__(self, d):
                vars(self).update(d)
        net = nn.Linear(3, 3)
        out = torch.sigmoid(net(torch.randn(2, 3)))
        b = Batch(act=out, n=3)
        b.act.add_(1)
        r = Rec({"x": out})
        r.x.sum().backward()
        """),
    "per-position losses of a chunk sliced by arithmetic bounds (``t[j:j + k + 1]``, its size known)": ("GG105", 9, """\
        import torch
        import torch.nn as nn
        lin = nn.Linear(3, 2)
        seq = torch.randn(9, 3)
        k = 4
        for j in range(0, 8, k):
            chunk = seq[j:j + k + 1]
            loss = lin(chunk).sum(1)
            loss.backward()
        """),
    "per-sample losses of a support set sliced from a task's samples (``xs[:n]``, its size known)": ("GG105", 11, """\
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        net = nn.Linear(1, 1)
        def sample_task(n=10):
            xs = torch.rand(2 * n, 1)
            return xs[:n], xs[n:]
        support, query = sample_task()
        params = list(net.parameters())
        loss = F.mse_loss(F.linear(support, *params), query, reduction="none").squeeze(1)
        grads = torch.autograd.grad(loss, params)
        """),
    "forces under inference_mode: grad switched back on by a statement, the positions made to require grad": ("GG104", 9, """\
        import torch
        import torch.nn as nn
        net = nn.Linear(3, 1)
        pos = torch.randn(4, 3)
        def energy_and_forces(x):
            torch.set_grad_enabled(True)
            x.requires_grad_(True)
            e = net(x).sum()
            f = torch.autograd.grad(e, x)[0]
            return e, f
        with torch.inference_mode():
            e, f = energy_and_forces(pos)
        """),
    "every child of a Sequential frozen, each in turn": ("GG104", 12, """\
        import torch
        import torch.nn as nn
        model = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 2))
        children = model.children()
        for child in children:
            for param in child.parameters():
                param.requires_grad = False
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for i in range(3):
            loss = model(torch.randn(5, 4)).sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
        """),
    "a generator step on every step past warm-up, before the detector's backward through it": ("GG103", 15, """\
        import torch
        import torch.nn as nn
        G = nn.Sequential(nn.Linear(3, 3), nn.Tanh(), nn.Linear(3, 3))
        D = nn.Linear(3, 1)
        opt_g = torch.optim.Adam(G.parameters())
        opt_d = torch.optim.Adam(D.parameters())
        warmup = 0
        def train_step(step, x):
            fake = G(x)
            if step > warmup:
                opt_g.zero_grad()
                fake.pow(2).mean().backward(retain_graph=True)
                opt_g.step()
            opt_d.zero_grad()
            D(fake).mean().backward()
            opt_d.step()
        for step in range(1, 4):
            train_step(step, torch.randn(2, 3))
        """),
    "a spectral layer's Fourier coefficients: a loss per output channel": ("GG105", 15, """\
        import torch
        import torch.nn as nn
        class Spectral(nn.Module):
            def __init__(self, c, modes):
                super().__init__()
                self.modes = modes
                self.w = nn.Parameter(torch.randn(c, c, modes, modes, dtype=torch.cfloat))
            def forward(self, x):
                x_ft = torch.fft.rfft2(x)
                out = torch.einsum("bixy,ioxy->boxy", x_ft[:, :, :self.modes, :self.modes], self.w)
                out = nn.functional.pad(out, (0, x_ft.size(-1) - self.modes, 0, x_ft.size(-2) - self.modes))
                return torch.fft.irfft2(out, s=x.shape[-2:])
        y = Spectral(2, 3)(torch.randn(4, 2, 8, 8))
        loss = y.flatten(-2).norm(dim=-1).mean(0)
        loss.backward()
        """),
    "a window of math.exp values over a range": ("GG101", 8, """\
        import math
        import torch
        window = torch.Tensor([math.exp(-(x - 2) ** 2 / 2.0) for x in range(5)])
        w = torch.randn(5, requires_grad=True)
        loss = (w * window).sum()
        loss = loss * loss
        loss.backward()
        loss.backward()
        """),
    "an in-place activation of a Sequential built from an OrderedDict": ("GG103", 11, """\
        from collections import OrderedDict
        import torch
        import torch.nn as nn
        block = nn.Sequential(OrderedDict([
            ("fc", nn.Linear(3, 4)),
            ("gate", nn.Sigmoid()),
            ("act", nn.ReLU(inplace=True)),
        ]))
        out = block(torch.randn(2, 3))
        loss = out.sum()
        loss.backward()
        """),
    "a content loss held by the only element of a list": ("GG101", 22, """\
        import torch
        import torch.nn as nn
        class ContentLoss(nn.Module):
            def __init__(self, target):
                super().__init__()
                self.target = target
            def forward(self, x):
                self.loss = ((x - self.target) ** 2).mean()
                return x
        conv = nn.Conv2d(3, 3, 3, padding=1)
        img = torch.rand(1, 3, 8, 8)
        losses, feats = [], img
        for layer in [conv, nn.ReLU()]:
            feats = layer(feats)
            if isinstance(layer, nn.Conv2d):
                losses.append(ContentLoss(feats))
        x = img.clone().requires_grad_(True)
        for step in range(2):
            for cl in losses:
                cl(conv(x))
            loss = sum(cl.loss for cl in losses)
            loss.backward()
        """),
    "layers named by str.format and f-strings, picked by name": ("GG101", 11, """\
        import torch
        import torch.nn as nn
        layers = nn.ModuleDict({"conv_1": nn.Linear(3, 3), "conv_2": nn.Linear(3, 3)})
        x = torch.randn(2, 3)
        feats = x
        for i in (1, 2):
            feats = layers["conv_{}".format(i)](feats)
            if f"conv_{i}" == "conv_2":
                target = feats
        for step in range(2):
            ((layers["conv_1"](x) - target) ** 2).mean().backward()
        """),
    "masks made from a list of numbers either branch gives": ("GG101", 10, """\
        import random
        import torch
        import torch.nn as nn
        critic = nn.Linear(3, 1)
        memory = [(torch.randn(3), 0.0 if random.random() < 0.1 else 1.0) for _ in range(8)]
        masks = torch.Tensor([m[1] for m in memory])
        values = critic(torch.stack([m[0] for m in memory])).squeeze(1)
        loss = (values * masks).pow(2).mean()
        loss.backward()
        loss.backward()
        """),
    "a replay memory's rows transposed by zip(*rows)": ("GG101", 11, """\
        import torch
        import torch.nn as nn
        q = nn.Linear(4, 2)
        memory = []
        for t in range(8):
            s = torch.randn(4)
            memory.append((s, q(s).max(), 1.0))
        states, values, rewards = zip(*memory)
        loss = torch.stack(values).pow(2).sum()
        loss.backward()
        torch.stack(values).pow(2).mean().backward()
        """),
    "a loss per element of the rows a boolean mask selects": ("GG105", 8, """\
        import torch
        import torch.nn as nn
        lin = nn.Linear(4, 3)
        x = torch.randn(2, 5, 4)
        mask = torch.ones(2, 5) > 0
        out = lin(x[mask])
        loss = nn.functional.mse_loss(out, torch.zeros_like(out), reduction="none")
        loss.backward()
        """),
    "a dict of known keys passed as keywords": ("GG105", 19, """\
        import torch
        import torch.nn as nn
        class Head(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 3)
                self.criterion = nn.CrossEntropyLoss(reduction="none")
            def forward(self, feats, labels=None, weights=None):
                logits = self.fc(feats)
                if labels is None:
                    return logits
                loss = self.criterion(logits, labels)
                if weights is not None:
                    loss = (loss * weights).sum()
                return loss
        head = Head()
        batch = {"feats": torch.randn(6, 4), "labels": torch.randint(0, 3, (6,))}
        loss = head(**batch)
        loss.backward()
        """),
    "a batch dict moved key by key, passed as keywords, its output object unwrapped": ("GG105", 22, """\
        import torch
        import torch.nn as nn
        class Head(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 3)
            def forward(self, feats, labels):
                return nn.functional.cross_entropy(self.fc(feats), labels, reduction="none")
        class Output:
            def __init__(self, loss):
                self.loss = loss
        def unwrap(out):
            if isinstance(out, torch.Tensor):
                return out.mean()
            return out.loss
        head = Head()
        batch = {"feats": torch.randn(6, 4), "labels": torch.randint(0, 3, (6,))}
        for k, v in batch.items():
            batch[k] = v.to("cpu")
        out = Output(head(**batch))
        loss = unwrap(out)
        loss.backward()
        """),
    "a DataLoader with worker processes over a TensorDataset": ("GG105", 7, """\
        import torch
        from torch.utils.data import DataLoader, TensorDataset
        net = torch.nn.Linear(4, 2)
        ds = TensorDataset(torch.randn(8, 4), torch.randn(8, 2))
        for x, y in DataLoader(ds, batch_size=4, shuffle=True, num_workers=2, pin_memory=True):
            loss = (net(x) - y) ** 2
            loss.backward()
        """),
    "a DataLoader's batches of a dataset of dicts": ("GG105", 14, """\
        import torch
        from torch.utils.data import DataLoader, Dataset
        class Pairs(Dataset):
            def __init__(self):
                self.x = torch.randn(8, 4)
                self.y = torch.randn(8, 2)
            def __len__(self):
                return 8
            def __getitem__(self, i):
                return {"x": self.x[i], "y": self.y[i]}
        net = torch.nn.Linear(4, 2)
        for batch in DataLoader(Pairs(), batch_size=4):
            loss = (net(batch["x"]) - batch["y"]) ** 2
            loss.backward()
        """),
    "two models made in a range(2) loop, each trained on its peer's output": ("GG101", 20, """\
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        models, optimizers = [], []
        for i in range(2):
            model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
            models.append(model)
            optimizers.append(torch.optim.SGD(model.parameters(), lr=0.1))
        x, labels = torch.randn(5, 4), torch.randint(0, 3, (5,))
        outputs = []
        for model in models:
            outputs.append(model(x))
        for i in range(2):
            loss = F.cross_entropy(outputs[i], labels)
            for j in range(2):
                if i != j:
                    loss = loss + F.kl_div(F.log_softmax(outputs[i], dim=1), F.softmax(outputs[j], dim=1),
                                           reduction="batchmean")
            optimizers[i].zero_grad()
            loss.backward()
            optimizers[i].step()
        """),
    "a dict of loss lists over one trunk, each backwarded in a loop over its items": ("GG101", 7, """\
        import torch
        w = torch.randn(3, requires_grad=True)
        h = torch.sigmoid(w)
        losses = {"cls": [(h * 2).sum()], "reg": [(h ** 2).sum(), (w * 3).sum()]}
        for name, parts in losses.items():
            loss = sum(parts)
            loss.backward()
        """),
    "two models' outputs made by a comprehension over them, each trained on its peer's": ("GG101", 18, """\
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        models, optimizers = [], []
        for i in range(2):
            model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
            models.append(model)
            optimizers.append(torch.optim.SGD(model.parameters(), lr=0.1))
        x, labels = torch.randn(5, 4), torch.randint(0, 3, (5,))
        outputs = [model(x) for model in models]
        for i in range(2):
            loss = F.cross_entropy(outputs[i], labels)
            for j in range(2):
                if i != j:
                    loss = loss + F.kl_div(F.log_softmax(outputs[i], dim=1), F.softmax(outputs[j], dim=1),
                                           reduction="batchmean")
            optimizers[i].zero_grad()
            loss.backward()
            optimizers[i].step()
        """),
    "the last state a loop appended, carried into the next epoch": ("GG101", 11, """\
        import torch
        w = torch.randn(3, requires_grad=True)
        seq = [torch.randn(3) for _ in range(5)]
        h = torch.zeros(3)
        for epoch in range(6):
            hs = []
            for x in seq:
                h = torch.tanh(h * w + x)
                hs.append(h)
            loss = hs[-1].sum()
            loss.backward()
        """),
    "an nn.ParameterList's weights stepped between two backwards": ("GG103", 19, """\
        import torch
        import torch.nn as nn
        class Cell(nn.Module):
            def __init__(self):
                super().__init__()
                self.Ws = nn.ParameterList([nn.Parameter(torch.randn(3, 3)) for _ in range(2)])
            def forward(self, x):
                for W in self.Ws:
                    x = torch.tanh(x @ W)
                return x
        cell = Cell()
        opt = torch.optim.SGD(cell.parameters(), lr=0.1)
        x = torch.randn(2, 3)
        out = cell(x)
        loss1 = out.pow(2).sum()
        loss2 = out.abs().sum()
        loss1.backward(retain_graph=True)
        opt.step()
        loss2.backward()
        """),
    "a critic's output in an attribute dict, its critic stepped before the policy's backward": ("GG103", 21, """\
        import torch
        import torch.nn as nn
        class AttrDict(dict):
            __getattr__ = dict.__getitem__
            __setattr__ = dict.__setitem__
        class Critic(nn.Module):
            def __init__(self):
                super().__init__()
                self.net = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 1))
            def forward(self, obs, action):
                return AttrDict(q=self.net(torch.cat([obs, action], dim=-1)))
        policy, critic = nn.Linear(3, 2), Critic()
        critic_opt = torch.optim.Adam(critic.parameters())
        obs = torch.randn(4, 3)
        out = AttrDict(action=policy(obs))
        policy_loss = -critic(obs, out.action).q.mean()
        critic_loss = critic(obs, torch.randn(4, 2)).q.pow(2).mean()
        critic_opt.zero_grad()
        critic_loss.backward()
        critic_opt.step()
        policy_loss.backward()
        """),
    "a dict whose items are its attributes, its loss backwarded twice": ("GG101", 10, """\
        import torch
        class Batch(dict):
            def __init__(self, *args, **kwargs):
                super().__init__(*args, **kwargs)
                self.__dict__ = self
        w = torch.randn(3, requires_grad=True)
        out = Batch({"loss": (w * w).sum()})
        out.loss.backward()
        out["extra"] = 1
        out.loss.backward()
        """),
    "scalar losses of two replicas stacked by a gather written with dict comprehensions": ("GG105", 30, """\
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        def scatter(batch, chunks):
            parts = {k: v.chunk(chunks) for k, v in batch.items()}
            return [{k: v[i] for k, v in parts.items()} for i in range(chunks)]
        def gather(outputs):
            first = outputs[0]
            if isinstance(first, dict):
                return {k: gather([o[k] for o in outputs]) for k in first}
            if first.dim() == 0:
                return torch.stack(outputs)
            return torch.cat(outputs, dim=0)
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(3, 2)
            def forward(self, batch):
                out = {"logits": self.fc(batch["x"])}
                out.update({"loss": F.cross_entropy(out["logits"], batch["y"])})
                return out
        class Parallel(nn.Module):
            def __init__(self, module, device_ids):
                super().__init__()
                self.module, self.device_ids = module, list(device_ids)
            def forward(self, batch):
                return gather([self.module(part) for part in scatter(batch, len(self.device_ids))])
        net = Parallel(Net(), range(2))
        output = net({"x": torch.randn(4, 3), "y": torch.randint(0, 2, (4,))})
        output["loss"].backward()
        """),
    "a target network deep-copied from a project's module, then frozen": ("GG101", 15, """\
        import copy
        import torch
        import torch.nn as nn
        class QNet(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(3, 1)
            def forward(self, x):
                return self.fc(x) ** 2
        q = QNet()
        target = copy.deepcopy(q).requires_grad_(False)
        x = torch.randn(4, 3)
        loss = (q(x) - target(x)).pow(2).mean()
        loss.backward()
        loss.backward()
        """),
    "a module caching its output under no_grad, the cache kept when training resumes": ("GG104", 25, """\
        import torch
        import torch.nn as nn
        class Cached(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(3, 3)
                self.cache = None
            def forward(self, x):
                if self.cache is None:
                    self.cache = self.fc(x)
                return self.cache
        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.enc = Cached()
            def forward(self, x):
                return self.enc(x).sum()
        model = Model()
        x = torch.randn(2, 3)
        model.eval()
        with torch.no_grad():
            model(x)
        model.train()
        loss = model(x)
        loss.backward()
        """),
    "an FPN's laterals, each a ReLU's output, added to in place top-down by a known index": ("GG103", 10, """\
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        convs = nn.ModuleList([nn.Conv2d(3, 4, 1) for _ in range(3)])
        feats = [torch.randn(1, 3, 8, 8), torch.randn(1, 3, 4, 4), torch.randn(1, 3, 2, 2)]
        laterals = [F.relu(conv(feats[i])) for i, conv in enumerate(convs)]
        for i in range(len(laterals) - 1, 0, -1):
            laterals[i - 1] += F.interpolate(laterals[i], size=laterals[i - 1].shape[2:])
        loss = sum(lateral.sum() for lateral in laterals)
        loss.backward()
        """),
    "a slice of a ReLU's reshaped output divided in place, its input picked by a tensor index": ("GG103", 10, """\
        import torch
        import torch.nn as nn
        net = nn.Sequential(nn.Linear(4, 6), nn.ReLU())
        x = torch.randn(3, 8)
        keep = torch.tensor([0, 2, 4, 6])
        params = net(x[:, keep]).reshape(3, 2, -1)
        widths = params[..., :2]
        widths /= 2.0
        loss = widths.sum() + params[..., 2:].sum()
        loss.backward()
        """),
    "per-replica losses gathered by type(first)(pairs), weighted by a loss spec split on + and *": ("GG105", 33, """\
        import torch
        import torch.nn as nn


        class Output(dict):
            def __getattr__(self, name):
                return self[name]


        class Loss(nn.modules.loss._Loss):
            def __init__(self, spec):
                super().__init__()
                self.terms = []
                for term in spec.split("+"):
                    weight, name = term.split("*")
                    self.terms.append({"name": name, "weight": float(weight)})

            def forward(self, output):
                return sum([t["weight"] * output[t["name"]] for t in self.terms])


        def gather(outputs):
            first = outputs[0]
            if isinstance(first, dict):
                return type(first)((k, gather([o[k] for o in outputs])) for k in first)
            return torch.stack(outputs) if first.dim() == 0 else torch.cat(outputs)


        net = nn.Linear(3, 2)
        parts = [torch.randn(2, 3), torch.randn(2, 3)]
        out = gather([Output(fit=net(p).pow(2).mean(), reg=net.weight.abs().sum()) for p in parts])
        loss = Loss("1*fit+0.1*reg")(out)
        loss.backward()
        """),
    "weights initialised by apply, a layer picked by its class name": ("GG108", 5, """\
        import torch.nn as nn
        def init(m):
            name = m.__class__.__name__
            if name.find("Linear") != -1:
                m.weight.normal_(0.0, 0.02)
            elif name.find("BatchNorm") != -1:
                m.bias.fill_(0)
        nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4)).apply(init)
        """),
}

# Twins of those that torch runs clean: no error either.
# Programs torch runs clean and GradGuard says nothing of, not even a warning.
QUIET = {
    "a DataLoader whose batch holds the whole dataset (len(dataset) rows) gives one batch: a total over it is no running total": """\
        import torch
        from torch.utils.data import DataLoader, TensorDataset
        net = torch.nn.Linear(3, 2)
        loss_fn = torch.nn.CrossEntropyLoss()
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        train = TensorDataset(torch.randn(8, 3), torch.randint(0, 2, (8,)))
        test = TensorDataset(torch.randn(6, 3), torch.randint(0, 2, (6,)))
        for epoch in range(2):
            for x, y in DataLoader(train, batch_size=4):
                opt.zero_grad()
                loss_fn(net(x), y).backward()
                opt.step()
            loss = 0
            for x, y in DataLoader(test, len(test)):
                loss += loss_fn(net(x), y)
            print(epoch, loss.item())
        """,
    "a generator whose one yield is a statement of its body yields one item: a loop over it is one pass, no stale gradient": """\
        import torch
        class Loader:
            def __init__(self):
                self.x = torch.randn(4, 3)
            def __iter__(self):
                batch = self.x.clone()
                yield batch
        def batches(x):
            yield x * 2
        net = torch.nn.Linear(3, 1)
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        for epoch in range(3):
            opt.zero_grad()
            for batch in Loader():
                loss = net(batch).pow(2).mean()
                loss.backward()
                opt.step()
            opt.zero_grad()
            for batch in batches(torch.randn(4, 3)):
                loss = net(batch).pow(2).mean()
                loss.backward()
                opt.step()
        """,
    "each agent's list of regularisers, made at one site in a loop, is one of several: its items are any agent's": """\
        import sys
        import torch
        import torch.nn as nn
        n = len(sys.argv) + 2
        policies = [nn.Linear(4, 2) for _ in range(n)]
        opts = [torch.optim.Adam(p.parameters()) for p in policies]
        obs = [torch.randn(5, 4) for _ in range(n)]
        all_log_pis = []
        all_regs = []
        for a_i, pi, ob in zip(range(n), policies, obs):
            out = pi(ob)
            rets = [out.log_softmax(1)]
            rets.append([(out ** 2).mean()])
            log_pi, regs = rets
            all_log_pis.append(log_pi)
            all_regs.append(regs)
        for a_i, log_pi, regs in zip(range(n), all_log_pis, all_regs):
            pol_loss = (log_pi * log_pi.detach()).mean()
            for reg in regs:
                pol_loss += 1e-3 * reg
            pol_loss.backward()
        """,
    "a dict entry popped by its constant key is what was stored under it, not every graph the dict ever held": """\
        import torch
        class Graph:
            def __init__(self):
                self.ndata = {}
            def propagate(self):
                h = self.ndata["h"]
                self.ndata["h"] = h * 2
        lin = torch.nn.Linear(3, 3)
        opt = torch.optim.SGD(lin.parameters(), lr=0.1)
        g = Graph()
        x = torch.randn(5, 3)
        for epoch in range(3):
            g.ndata["h"] = lin(x).relu()
            g.propagate()
            feats = g.ndata.pop("h")
            loss = feats.pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        """,
    "a method nobody resolvably calls that switches grad on itself is analysed where grad is off: what it computes before is no graph": """\
        import os
        import torch
        class Agent:
            def __init__(self):
                self.cri = torch.nn.Linear(3, 1)
                self.opt = torch.optim.SGD(self.cri.parameters(), lr=0.1)
            def update(self, states):
                values = self.cri(states).squeeze(1)
                torch.set_grad_enabled(True)
                for _ in range(2):
                    loss = (self.cri(states).squeeze(1) - values * 2).pow(2).mean()
                    self.opt.zero_grad()
                    loss.backward()
                    self.opt.step()
                torch.set_grad_enabled(False)
        agent = Agent()
        torch.set_grad_enabled(False)
        getattr(agent, os.environ.get("AGENT_METHOD", "update"))(torch.randn(4, 3))
        """,
    "a recurrent layer given a PackedSequence returns one: its `.data` is the rows with their graph, not a detached copy": """\
        import torch
        import torch.nn as nn
        rnn = nn.RNN(input_size=4, hidden_size=4, num_layers=2)
        x = torch.randn((5, 3, 4)).requires_grad_()
        lens = torch.tensor([5, 4, 3])
        packed_seq = nn.utils.rnn.pack_padded_sequence(x, lens)
        hidden = torch.zeros((2, 3, 4))
        output, _ = rnn(packed_seq, hidden)
        output.data.float().sum().backward()
        """,
    "a dict updated from lists of (name, loss) pairs, the first empty, holds the losses: the running total among them is walked": """\
        import torch
        class Model(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.net = torch.nn.Linear(2, 1)
            def initial_loss(self, x):
                return []
            def boundary_loss(self, x):
                loss = []
                loss.append(("boundary", self.net(x).relu().mean()))
                return loss
            def descent_loss(self, x):
                loss = []
                total = torch.tensor(0.0).type_as(x)
                for s in range(3):
                    total = total + self.net(x * s).relu().mean()
                loss.append(("descent", total))
                return loss
            def training_step(self, x):
                parts = {}
                parts.update(self.initial_loss(x))
                parts.update(self.boundary_loss(x))
                parts.update(self.descent_loss(x))
                loss = torch.tensor(0.0).type_as(x)
                for _, value in parts.items():
                    loss = loss + value
                return {"loss": loss, **parts}
        model = Model()
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for step in range(2):
            out = model.training_step(torch.randn(4, 2))
            opt.zero_grad()
            out["loss"].backward()
            opt.step()
        """,
}


CLEAN = {
    "the optimizers' parameters split by each key of a dict of models: the generator's step leaves the discriminator": """\
        import torch
        import torch.nn as nn
        models = {}
        models["encoder"] = nn.Linear(3, 3)
        models["decoder"] = nn.Linear(3, 3)
        models["discriminator"] = nn.Linear(3, 1)
        params, params_d = [], []
        for key in models.keys():
            if "discr" in key:
                params_d += list(models[key].parameters())
            else:
                params += list(models[key].parameters())
        opt, opt_d = torch.optim.Adam(params), torch.optim.Adam(params_d)
        for step in range(2):
            top = models["decoder"](models["encoder"](torch.randn(4, 3)))
            loss_g = models["discriminator"](top).mean() + top.pow(2).mean()
            loss_d = models["discriminator"](top.detach()).mean()
            opt.zero_grad()
            loss_g.backward()
            opt.step()
            opt_d.zero_grad()
            loss_d.backward()
            opt_d.step()
        """,
    "one test twice in an iteration goes one way both times: the loss backwarded is the one this iteration made": """\
        import torch
        def train(delay, n):
            net = torch.nn.Linear(3, 1)
            q = torch.nn.Linear(3, 1)
            opt, opt_q = torch.optim.SGD(net.parameters(), lr=0.1), torch.optim.SGD(q.parameters(), lr=0.1)
            for i in range(n):
                if (i + 1) % delay == 0 or i == n - 1:
                    policy_loss = (q(net(torch.randn(4, 3)) * torch.ones(4, 3)) ** 2).mean()
                q_loss = (q(torch.randn(4, 3)) ** 2).mean()
                if (i + 1) % delay == 0 or i == n - 1:
                    opt.zero_grad()
                    policy_loss.backward()
                opt_q.zero_grad()
                q_loss.backward()
                opt_q.step()
                if (i + 1) % delay == 0 or i == n - 1:
                    opt.step()
        train(2, 5)
        """,
    "zero_grad() after a backward of unknown reach: the step skips those weights, the graph that saved them is intact": """\
        import functools
        import torch
        enc = torch.nn.Linear(3, 3)
        enc2 = torch.nn.Linear(3, 3)
        head = torch.nn.Linear(3, 1)
        value_opt = torch.optim.Adam(enc2.parameters())
        head_opt = torch.optim.Adam(head.parameters())
        x = torch.randn(4, 3)
        for step in range(2):
            feats = enc2(enc(x))
            aux = functools.reduce(lambda u, v: u + v, (head(feats).sum(),))
            head_opt.zero_grad()
            aux.backward(retain_graph=True)
            head_opt.step()
            value_opt.zero_grad()
            value_opt.step()
            feats.sum().backward()
        """,
    "a parameter made of sizes and moved with `.to(\"cpu\")` stays a leaf: each step's graph is its own": """\
        import torch
        class Linear(torch.nn.Module):
            def __init__(self, n, device="cpu"):
                super().__init__()
                self.weight = torch.nn.Parameter(torch.Tensor(sum(d for d in [n]), 1)).to(device)
                torch.nn.init.normal_(self.weight, std=0.01)
            def forward(self, x):
                return x.matmul(self.weight)
        model = Linear(4)
        optim = torch.optim.SGD(model.parameters(), lr=0.1)
        for _ in range(3):
            loss = model(torch.randn(8, 4)).pow(2).sum()
            optim.zero_grad()
            loss.backward()
            optim.step()
        assert model.weight.is_leaf and model.weight.grad is not None
        """,
    "a warm-up counter compared in the loop: false in the first steps, true later, when the trained term joins": """\
        import torch
        net = torch.nn.Linear(4, 1)
        frozen = torch.nn.Linear(4, 1).requires_grad_(False)
        class Trainer:
            def __init__(self):
                self.step = 0
            def loss(self, x):
                loss = frozen(x).sum() * 0
                if self.step >= 2:
                    loss = loss + net(x).sum()
                self.step += 1
                return loss
        trainer = Trainer()
        for x in [torch.randn(3, 4) for _ in range(4)]:
            loss = trainer.loss(x)
            if loss.requires_grad:
                loss.backward()
        """,
    "a Categorical's probs computed from its logits, read once per step: each step its own graph": """\
        import torch
        from torch.distributions import Categorical, Normal
        w = torch.randn(4, 3, requires_grad=True)
        for step in range(2):
            dist = Categorical(logits=torch.randn(2, 4) @ w)
            loss = dist.probs.sum() + Normal(w, 1.0).mean.sum()
            loss.backward()
        """,
    "a head in an nn.ModuleDict unfrozen by name after every parameter was frozen: it trains": """\
        import torch
        import torch.nn as nn
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.body = nn.Linear(4, 4)
                self.heads = nn.ModuleDict({"cls": nn.Linear(4, 2)})
            def forward(self, x):
                return self.heads["cls"](self.body(x))
        net = Net()
        for p in net.parameters():
            p.requires_grad = False
        for name, p in net.named_parameters():
            if "heads" in name:
                p.requires_grad = True
        loss = net(torch.randn(3, 4)).sum()
        loss.backward()
        """,
    "the first blocks of several a comprehension made frozen by name: the last still trains": """\
        import torch
        import torch.nn as nn
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.blocks = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])
            def forward(self, x):
                for block in self.blocks:
                    x = block(x)
                return x
        model = Net()
        for name, param in model.named_parameters():
            if name.startswith(("blocks.0.", "blocks.1.")):
                param.requires_grad = False
        loss = model(torch.randn(2, 4)).sum()
        loss.backward()
        """,
    "all but the head frozen by name: the head still trains": """\
        import torch
        import torch.nn as nn
        class Encoder(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv1 = nn.Conv2d(3, 8, 3)
                self.VPT = nn.Parameter(torch.randn(2, 8))
                self.head = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 4))
            def forward(self, x):
                h = self.conv1(x).mean((2, 3)) + self.VPT.sum(0)
                return self.head(h)
        model = Encoder()
        for name, param in model.named_parameters():
            if "head" not in name:
                param.requires_grad_(False)
        loss = model(torch.randn(2, 3, 8, 8)).pow(2).mean()
        loss.backward()
        """,
    "biases frozen by name: the weights of the same layers still train": """\
        import torch
        import torch.nn as nn
        model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))
        for name, param in model.named_parameters():
            if name.endswith("bias"):
                param.requires_grad = False
        loss = model(torch.randn(3, 4)).sum()
        loss.backward()
        """,
    "a Sequential of named layers (an OrderedDict): its parameters are not named by index": """\
        from collections import OrderedDict
        import torch
        import torch.nn as nn
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.net = nn.Sequential(OrderedDict([("fc", nn.Linear(4, 8)), ("act", nn.ReLU()), ("out", nn.Linear(8, 1))]))
            def forward(self, x):
                return self.net(x)
        model = Net()
        for name, param in model.named_parameters():
            if not name.startswith("net.fc"):
                param.requires_grad = False
        loss = model(torch.randn(3, 4)).sum()
        loss.backward()
        """,
    "a hidden state a helper detaches in place on a setting not known: the caller's is cut maybe": """\
        import sys
        import torch
        import torch.nn as nn
        rnn = nn.RNN(4, 8)
        opt = torch.optim.SGD(rnn.parameters(), lr=0.1)
        truncate = len(sys.argv) < 50
        def repackage(h):
            if truncate:
                h.detach_()
        h = torch.zeros(1, 2, 8)
        for step in range(3):
            out, h = rnn(torch.randn(5, 2, 4), h)
            loss = out.pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            repackage(h)
        """,
    "a hidden state detached in place by a helper after each backward: the caller's is cut too": """\
        import torch
        import torch.nn as nn
        rnn = nn.RNN(4, 8)
        opt = torch.optim.SGD(rnn.parameters(), lr=0.1)
        def repackage(h):
            h.detach_()
        h = torch.zeros(1, 2, 8)
        for step in range(3):
            out, h = rnn(torch.randn(5, 2, 4), h)
            loss = out.pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
            repackage(h)
        """,
    "a project's optimizer writing its ``param_groups`` in place, then a new loss backwarded": """\
        import torch
        class Perturb(torch.optim.Optimizer):
            def __init__(self, params, rho=0.05):
                super().__init__(params, dict(rho=rho))
            @torch.no_grad()
            def first_step(self):
                for group in self.param_groups:
                    for p in group["params"]:
                        if p.grad is not None:
                            p.add_(p.grad * group["rho"])
        net = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.Linear(3, 3))
        opt = Perturb(net.parameters())
        loss = net(torch.randn(2, 3)).pow(2).sum()
        loss.backward()
        opt.first_step()
        loss = net(torch.randn(2, 3)).pow(2).sum()
        loss.backward()
        """,
    "manual SGD over every parameter, each iteration its own loss": """\
        import torch
        net = torch.nn.Sequential(torch.nn.Linear(3, 3), torch.nn.Linear(3, 3))
        for _ in range(3):
            loss = net(torch.randn(2, 3)).pow(2).sum()
            net.zero_grad()
            loss.backward()
            with torch.no_grad():
                for p in net.parameters():
                    p -= 0.1 * p.grad
        """,
    "``nn.Embedding.from_pretrained(w, freeze=False)`` trains its weight": """\
        import torch
        import torch.nn as nn
        emb = nn.Embedding.from_pretrained(torch.randn(5, 3), freeze=False)
        loss = emb(torch.tensor([0, 1])).pow(2).sum()
        loss.backward()
        """,
    "AMP's loop: scale, backward, step, update, each iteration its own loss": """\
        import torch
        lin = torch.nn.Linear(3, 3)
        opt = torch.optim.SGD(lin.parameters(), lr=0.1)
        scaler = torch.amp.GradScaler("cpu", enabled=False)
        for _ in range(2):
            opt.zero_grad()
            loss = lin(torch.randn(2, 3)).pow(2).sum()
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        """,
    "``hasattr(self, \"neck\")`` of a module built with one: the neck trains": """\
        import torch
        import torch.nn as nn
        class Detector(nn.Module):
            def __init__(self, neck=None):
                super().__init__()
                self.backbone = nn.Linear(3, 3)
                if neck is not None:
                    self.neck = neck
                for p in self.backbone.parameters():
                    p.requires_grad = False
            def forward(self, x):
                x = self.backbone(x)
                if hasattr(self, "neck"):
                    x = self.neck(x)
                return x.sum()
        det = Detector(neck=nn.Linear(3, 3))
        loss = det(torch.randn(2, 3))
        loss.backward()
        """,
    "a bare ``torch.set_grad_enabled(False)`` in evaluation, switched back on by the training function": """\
        import torch
        w = torch.randn(3, requires_grad=True)
        def evaluate(x):
            torch.set_grad_enabled(False)
            return (x * w).sum().item()
        def train(x):
            torch.set_grad_enabled(True)
            loss = (x * w).sum()
            return loss
        x = torch.randn(3)
        for epoch in range(2):
            evaluate(x)
            loss = train(x)
            loss.backward()
        """,
    "a ``return`` inside ``with torch.no_grad()``: leaving the block restores the mode": """\
        import torch
        w = torch.randn(3, requires_grad=True)
        def accuracy(x):
            with torch.no_grad():
                return (x * w).sum().item()
        x = torch.randn(3)
        for epoch in range(2):
            accuracy(x)
            loss = (x * w).sum()
            loss.backward()
        """,
    "evaluation under ``@torch.no_grad()``: the decorator restores the mode on return": """\
        import torch
        w = torch.randn(3, requires_grad=True)
        @torch.no_grad()
        def evaluate(x):
            return (x * w).sum().item()
        x = torch.randn(3)
        for epoch in range(2):
            evaluate(x)
            loss = (x * w).sum()
            loss.backward()
        """,
    "a weighted sum over the dict's losses the filter keeps: both scalars": """\
        import torch
        w = torch.randn(3, requires_grad=True)
        losses = {"a": (w * w).sum(), "b": torch.stack([w.sum(), w.mean()])}
        weights = {"a": 1.0, "c": 2.0}
        total = sum([v * losses[k] for k, v in weights.items() if k in losses])
        total.backward()
        """,
    "two log-probs of one ``Bernoulli(logits)`` of a leaf, each backwarded once (no node shared)": """\
        import torch
        q = torch.tensor(0.3, requires_grad=True)
        pi = torch.distributions.Bernoulli(logits=q)
        l1 = pi.log_prob(torch.tensor(1.0))
        l2 = pi.log_prob(torch.tensor(0.0))
        l1.backward()
        l2.backward()
        """,
    "``.grad`` read only of a leaf (``t.is_leaf and t.grad``) over a non-leaf and a parameter": """\
        import warnings
        import torch
        warnings.simplefilter("error")
        def proxy(t):
            return t.grad if t.is_leaf and t.grad is not None else None
        w = torch.randn(3, requires_grad=True)
        proxy(w * 2)
        proxy(w)
        """,
    "a class made by ``type(name, bases, dict)`` whose static method builds one loss, walked once": """\
        import torch
        def run(x):
            return (x * x).sum()
        Tools = type("Tools", (), {"run": staticmethod(run), "scale": 2.0})
        w = torch.randn(3, requires_grad=True)
        loss = Tools.run(w) * Tools.scale
        loss.backward()
        """,
    "a tied output layer over an embedding without max_norm": """\
        import torch
        import torch.nn as nn
        emb = nn.Embedding(20, 4)
        h = torch.randn(3, 4, requires_grad=True)
        logits = h @ emb.weight.t()
        e = emb(torch.tensor([1, 2]))
        (logits.sum() + e.sum()).backward()
        """,
    "a tied output layer over a clone of the weight of an embedding with max_norm": """\
        import torch
        import torch.nn as nn
        emb = nn.Embedding(20, 4, max_norm=1.0)
        h = torch.randn(3, 4, requires_grad=True)
        logits = h @ emb.weight.clone().t()
        e = emb(torch.tensor([1, 2]))
        (logits.sum() + e.sum()).backward()
        """,
    "one of the results of a generator written in place, another walked (``list(f(x) for x in xs)``, ``map``)": """\
        import torch
        w = torch.randn(3, requires_grad=True)
        v = torch.randn(3, requires_grad=True)
        hs = list(torch.exp(x) for x in [w, v])
        hs[0].add_(1)
        hs[1].sum().backward()
        gs = list(map(torch.exp, [w, v]))
        gs[0].add_(1)
        gs[1].sum().backward()
        """,
    "evaluation under no_grad, the backward behind a flag off by default (``parse_args([])``)": """\
        import argparse
        import torch
        import torch.nn as nn
        parser = argparse.ArgumentParser()
        group = parser.add_argument_group("training")
        group.add_argument("--train", action="store_true")
        parser.add_argument("--lr", type=float, default=0.1)
        args = parser.parse_args([])
        net = nn.Linear(3, 1)
        opt = torch.optim.SGD(net.parameters(), lr=args.lr)
        with torch.no_grad():
            loss = net(torch.randn(4, 3)).pow(2).mean()
        if args.train:
            loss.backward()
            opt.step()
        """,
    "the backward of a train phase only, an enum of tuple values (``TRAIN = 0,``) telling the phases apart": """\
        import enum
        import torch
        import torch.nn as nn
        class LoopPhase(enum.Enum):
            TRAIN = 0,
            VAL = 1,
        net = nn.Linear(3, 2)
        opt = torch.optim.SGD(net.parameters(), lr=0.1)
        def main_loop(phase):
            loss = net(torch.randn(4, 3)).pow(2).mean()
            if phase == LoopPhase.TRAIN:
                opt.zero_grad()
                loss.backward()
                opt.step()
            return loss.item()
        for epoch in range(2):
            main_loop(phase=LoopPhase.TRAIN)
            with torch.no_grad():
                main_loop(phase=LoopPhase.VAL)
        """,
    "forces under no_grad: grad switched back on by a statement, the positions made to require grad": """\
        import torch
        import torch.nn as nn
        net = nn.Linear(3, 1)
        pos = torch.randn(4, 3)
        def energy_and_forces(x):
            torch.set_grad_enabled(True)
            x.requires_grad_(True)
            e = net(x).sum()
            f = torch.autograd.grad(e, x)[0]
            return e, f
        with torch.no_grad():
            e, f = energy_and_forces(pos)
        """,
    "all children but the head frozen, each in turn, from a slice of the list of children": """\
        import torch
        import torch.nn as nn
        model = nn.Sequential(nn.Linear(4, 4), nn.ReLU(), nn.Linear(4, 2))
        children = list(model.children())
        for child in children[:-1]:
            for param in child.parameters():
                param.requires_grad = False
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for i in range(3):
            loss = model(torch.randn(5, 4)).sum()
            opt.zero_grad()
            loss.backward()
            opt.step()
        """,
    "a new input tensor reshaped in place each step before the RNN saves it": """\
        import numpy as np
        import torch
        import torch.nn as nn
        rnn = nn.RNN(1, 8)
        opt = torch.optim.Adam(rnn.parameters())
        data = np.random.rand(6, 1)
        for row in data:
            x = torch.from_numpy(row.astype(np.float32)).clone()
            x.unsqueeze_(dim=0)
            out, h = rnn(x)
            loss = out.pow(2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
        """,
    "a target network deep-copied from a project's module and frozen, the online one trained": """\
        import copy
        import torch
        import torch.nn as nn
        class QNet(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(3, 1)
            def forward(self, x):
                return self.fc(x)
        q = QNet()
        target = copy.deepcopy(q).requires_grad_(False)
        x = torch.randn(4, 3)
        loss = (q(x) - target(x)).pow(2).mean()
        loss.backward()
        """,
    "a submodule's own train() dropping the cache filled under no_grad, called by model.train()": """\
        import torch
        import torch.nn as nn
        class Cached(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(3, 3)
                self.cache = None
            def train(self, mode=True):
                if mode and not self.training:
                    self.cache = None
                return super().train(mode)
            def forward(self, x):
                if self.cache is None:
                    self.cache = self.fc(x)
                return self.cache
        class Model(nn.Module):
            def __init__(self):
                super().__init__()
                self.enc = Cached()
            def forward(self, x):
                return self.enc(x).sum()
        model = Model()
        x = torch.randn(2, 3)
        model.eval()
        with torch.no_grad():
            model(x)
        model.train()
        loss = model(x)
        loss.backward()
        """,
    "an FPN's laterals added to top-down out of place": """\
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        convs = nn.ModuleList([nn.Conv2d(3, 4, 1) for _ in range(3)])
        feats = [torch.randn(1, 3, 8, 8), torch.randn(1, 3, 4, 4), torch.randn(1, 3, 2, 2)]
        laterals = [F.relu(conv(feats[i])) for i, conv in enumerate(convs)]
        for i in range(len(laterals) - 1, 0, -1):
            laterals[i - 1] = laterals[i - 1] + F.interpolate(laterals[i], size=laterals[i - 1].shape[2:])
        loss = sum(lateral.sum() for lateral in laterals)
        loss.backward()
        """,
    "a slice of a ReLU's reshaped output divided out of place": """\
        import torch
        import torch.nn as nn
        net = nn.Sequential(nn.Linear(4, 6), nn.ReLU())
        x = torch.randn(3, 8)
        keep = torch.tensor([0, 2, 4, 6])
        params = net(x[:, keep]).reshape(3, 2, -1)
        widths = params[..., :2]
        widths = widths / 2.0
        loss = widths.sum() + params[..., 2:].sum()
        loss.backward()
        """,
    "per-replica losses gathered and weighted, then averaged": """\
        import torch
        import torch.nn as nn


        class Output(dict):
            def __getattr__(self, name):
                return self[name]


        class Loss(nn.modules.loss._Loss):
            def __init__(self, spec):
                super().__init__()
                self.terms = []
                for term in spec.split("+"):
                    weight, name = term.split("*")
                    self.terms.append({"name": name, "weight": float(weight)})

            def forward(self, output):
                return sum([t["weight"] * output[t["name"]] for t in self.terms])


        def gather(outputs):
            first = outputs[0]
            if isinstance(first, dict):
                return type(first)((k, gather([o[k] for o in outputs])) for k in first)
            return torch.stack(outputs) if first.dim() == 0 else torch.cat(outputs)


        net = nn.Linear(3, 2)
        parts = [torch.randn(2, 3), torch.randn(2, 3)]
        out = gather([Output(fit=net(p).pow(2).mean(), reg=net.weight.abs().sum()) for p in parts])
        loss = Loss("1*fit+0.1*reg")(out).mean()
        loss.backward()
        """,
    "a loss bound in an if/elif chain on a nested setting (self.config.training.algo)": """\
        import sys
        from types import SimpleNamespace
        import torch
        import torch.nn as nn
        class Runner:
            def __init__(self, config):
                self.config = config
                self.net = nn.Linear(4, 4)
                self.opt = torch.optim.SGD(self.net.parameters(), lr=0.1)
            def train(self, data):
                for x in data:
                    out = self.net(x)
                    if self.config.training.algo == "ssm":
                        loss = (out * out).mean()
                    elif self.config.training.algo == "dsm":
                        loss = (out * x).mean()
                    self.opt.zero_grad()
                    loss.backward()
                    self.opt.step()
        algo = "ssm" if len(sys.argv) < 9 else "dsm"
        Runner(SimpleNamespace(training=SimpleNamespace(algo=algo))).train([torch.randn(2, 4) for _ in range(3)])
        """,
    "a loss bound in an if/elif chain on a setting that never changes, backwarded each step": """\
        import sys
        import torch
        import torch.nn as nn
        class Solver:
            def __init__(self, objective):
                self.objective = objective
                self.net = nn.Linear(4, 4)
                self.optim = torch.optim.Adam(self.net.parameters())
            def train(self, data):
                for x in data:
                    out = self.net(x)
                    recon = (out - x).pow(2).mean()
                    if self.objective == "H":
                        loss = recon + out.abs().mean()
                    elif self.objective == "B":
                        loss = recon + 2 * out.abs().mean()
                    self.optim.zero_grad()
                    loss.backward()
                    self.optim.step()
        Solver("H" if len(sys.argv) < 9 else "B").train([torch.randn(2, 4) for _ in range(3)])
        """,
    "a critic's output in an attribute dict, the policy updated before its critic": """\
        import torch
        import torch.nn as nn
        class AttrDict(dict):
            __getattr__ = dict.__getitem__
            __setattr__ = dict.__setitem__
        class Critic(nn.Module):
            def __init__(self):
                super().__init__()
                self.net = nn.Sequential(nn.Linear(5, 8), nn.ReLU(), nn.Linear(8, 1))
            def forward(self, obs, action):
                return AttrDict(q=self.net(torch.cat([obs, action], dim=-1)))
        policy, critic = nn.Linear(3, 2), Critic()
        critic_opt = torch.optim.Adam(critic.parameters())
        obs = torch.randn(4, 3)
        out = AttrDict(action=policy(obs))
        policy_loss = -critic(obs, out.action).q.mean()
        critic_loss = critic(obs, torch.randn(4, 2)).q.pow(2).mean()
        policy_loss.backward()
        critic_opt.zero_grad()
        critic_loss.backward()
        critic_opt.step()
        """,
    "two models made in a range(2) loop, each stepped after its own backward": """\
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        models, optimizers = [], []
        for i in range(2):
            model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
            models.append(model)
            optimizers.append(torch.optim.SGD(model.parameters(), lr=0.1))
        x, labels = torch.randn(5, 4), torch.randint(0, 3, (5,))
        outputs = []
        for model in models:
            outputs.append(model(x))
        for i in range(2):
            loss = F.cross_entropy(outputs[i], labels)
            for j in range(2):
                if i != j:
                    loss = loss + F.kl_div(F.log_softmax(outputs[i], dim=1), F.softmax(outputs[j].detach(), dim=1),
                                           reduction="batchmean")
            optimizers[i].zero_grad()
            loss.backward()
            optimizers[i].step()
        """,
    "a runner calling its one hook, which backwards the step's loss": """\
        import torch
        class OptimizerHook:
            def after_train_iter(self, runner):
                runner.outputs["loss"].backward()
        class Runner:
            def __init__(self, hooks):
                self.hooks = hooks
            def call_hook(self, name):
                for hook in self.hooks:
                    getattr(hook, name)(self)
        w = torch.randn(3, requires_grad=True)
        runner = Runner([OptimizerHook()])
        for batch in [torch.randn(3) for _ in range(5)]:
            runner.outputs = {"loss": (w * w * batch).sum()}
            runner.call_hook("after_train_iter")
        """,
    "parameters made to require grad in a loop over the list that holds them": """\
        import torch
        import torch.nn.functional as F
        C = torch.randn((27, 10))
        W1 = torch.randn((30, 27))
        parameters = [C, W1]
        for p in parameters:
            p.requires_grad = True
        X, Y = torch.randint(0, 27, (32, 3)), torch.randint(0, 27, (32,))
        for i in range(3):
            loss = F.cross_entropy(C[X].view(-1, 30) @ W1, Y)
            for p in parameters:
                p.grad = None
            loss.backward()
            for p in parameters:
                p.data += -0.1 * p.grad
        """,
    "a dict of losses over one trunk, summed in a loop over its values": """\
        import torch
        w = torch.randn(3, requires_grad=True)
        h = torch.sigmoid(w)
        losses = {"a": (h * 2).sum(), "b": (h ** 2).sum()}
        total = 0
        for loss in losses.values():
            total = total + loss
        total.backward()
        """,
}


@pytest.mark.parametrize("name", list(QUIET))
def test_quiet_programs_get_no_finding(name, tmp_path):
    source = textwrap.dedent(QUIET[name])
    path = tmp_path / "prog.py"
    path.write_text(source)
    ran = torchrun.run(path)
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert [(f.code, f.location.line) for f in analyze_source(source, str(path)).findings] == []


@pytest.mark.parametrize("name", list(CLEAN))
def test_clean_twins_get_no_error(name, tmp_path):
    source = textwrap.dedent(CLEAN[name])
    path = tmp_path / "prog.py"
    path.write_text(source)
    ran = torchrun.run(path)
    assert ran.returncode == 0, ran.stderr[-2000:]
    found = [(f.code, f.location.line) for f in analyze_source(source, str(path)).findings if f.severity == "error"]
    assert found == []


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_python_semantics_keep_the_proof_exact(name, tmp_path):
    code, line, program = PROGRAMS[name]
    source = textwrap.dedent(program)
    path = tmp_path / "prog.py"
    path.write_text(source)
    ran = torchrun.run(path)
    assert ran.returncode != 0 and "RuntimeError" in ran.stderr, ran.stderr[-2000:]
    assert f'prog.py", line {line},' in ran.stderr, ran.stderr[-2000:]
    found = [(f.code, f.location.line, f.severity) for f in analyze_source(source, str(path)).findings]
    assert (code, line, "error") in found, found


@pytest.mark.parametrize("head", ["for row in out.numpy():", "if out.numpy().sum() > 0:", "while out.numpy().sum() > 0:"])
def test_a_header_that_raises_runs_no_body(head, tmp_path):
    """A loop or branch whose header raises (``for row in out.numpy():``) ends there: torch
    never reaches its body, so the body's own raise is no finding."""
    source = f"import torch\nw = torch.randn(3, 2, requires_grad=True)\nout = torch.randn(4, 3) @ w\n{head}\n    print(out[0].numpy())\n    out = out.detach()\n"
    path = tmp_path / "prog.py"
    path.write_text(source)
    ran = torchrun.run(path)
    assert 'prog.py", line 4,' in ran.stderr and "numpy() on Tensor that requires grad" in ran.stderr, ran.stderr[-2000:]
    found = [(f.code, f.location.line) for f in analyze_source(source, str(path)).findings if f.severity == "error"]
    assert found == [("GG107", 4)]


def test_a_tensor_made_where_the_default_device_may_not_be_the_cpu_is_moved_by_to_cpu():
    """Under ``with torch.device(...)`` (or after ``torch.set_default_device``) a factory's
    tensor may live elsewhere, so ``.to("cpu")`` may copy it: no claim that the result is the
    leaf itself (whose in-place write torch would refuse)."""
    for setup in ('with torch.device("meta"):\n    w = torch.randn(3, requires_grad=True)\n',
                  'torch.set_default_device("cuda")\nw = torch.randn(3, requires_grad=True)\n'):
        source = "import torch\n" + setup + "v = w.to(\"cpu\")\nv.add_(1)\n"
        found = [(f.code, f.severity) for f in analyze_source(source, "prog.py").findings]
        assert ("GG108", "error") not in found, (setup, found)
    moved = ("import torch\ndev = 'cuda' if torch.cuda.is_available() else 'cpu'\n"
             "w = torch.randn(3, requires_grad=True)\ny = torch.exp(w.to(dev))\nz = y.cpu()\nz.add_(1)\n"
             "y.sum().backward()\n")  # on a GPU, z is a copy: nothing spoilt
    assert [f for f in analyze_source(moved, "prog.py").findings if f.severity == "error"] == []
    source = "import torch\nw = torch.randn(3, requires_grad=True)\nv = w.to(\"cpu\")\nv.add_(1)\n"
    assert ("GG108", 4) in [(f.code, f.location.line) for f in analyze_source(source, "prog.py").findings]
