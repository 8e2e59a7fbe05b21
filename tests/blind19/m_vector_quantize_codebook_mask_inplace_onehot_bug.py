# Source: https://github.com/lucidrains/vector-quantize-pytorch/commit/82174ed9536c3ed58e2f450464ac88f63f2c2864
"""vector-quantize-pytorch Codebook before commit 82174ed (PR #247, "avoid
in-place codebook mask update"), trained with a learnable codebook, dead-code
replacement and a padding mask.

Codebook.forward computes `embed_onehot` (F.one_hot of the nearest code) and,
while training, `quantize = einsum('h b n c, h c d -> h b n d', unpacked_onehot,
embed)`.  With `learnable_codebook=True` the codebook `embed` is an
nn.Parameter, so einsum saves the one-hot matrix to compute the gradient of
`embed`.  Afterwards `update_codebook` -> `track_cluster_size_and_embed_avg`
zeroes the padded rows in place with `embed_onehot[~mask] = 0.` (the
unpacked one-hot is a view of the same storage), bumping its version.  When the
training loop calls `loss.backward()`, autograd finds the saved one-hot
modified: "one of the variables needed for gradient computation has been
modified by an inplace operation".

The commit replaces it with an out-of-place
`embed_onehot = embed_onehot.masked_fill(~rearrange(mask, '... -> ... 1'), 0.)`.
einops is replaced by plain torch reshapes here.
"""
from functools import partial

import torch
from torch import nn, einsum
from torch.nn import Module
import torch.nn.functional as F


def exists(val):
    return val is not None


def default(val, d):
    return val if exists(val) else d


def identity(t):
    return t


def noop(*args, **kwargs):
    pass


def cdist(x, y, eps = 1e-8):
    x2 = (x ** 2).sum(dim = -1)
    y2 = (y ** 2).sum(dim = -1)
    xy = einsum('b i d, b j d -> b i j', x, y) * -2
    return (x2.unsqueeze(-1) + y2.unsqueeze(-2) + xy).clamp(min = eps).sqrt()


def pack_one(t, pattern):
    # 'h * d' : merge the middle dims
    ps = t.shape[1:-1]
    packed = t.reshape(t.shape[0], -1, t.shape[-1])

    def unpack_one(to_unpack, unpack_pattern = None):
        return to_unpack.reshape(to_unpack.shape[0], *ps, *to_unpack.shape[2:])

    return packed, unpack_one


def uniform_init(*shape):
    t = torch.empty(shape)
    nn.init.kaiming_uniform_(t)
    return t


def gumbel_sample(logits, temperature = 1., stochastic = False, straight_through = False, dim = -1, training = True, topk = None):
    dtype, size = logits.dtype, logits.shape[dim]
    sampling_logits = logits
    ind = sampling_logits.argmax(dim = dim)
    one_hot = F.one_hot(ind, size).type(dtype)
    if not straight_through or temperature <= 0. or not training:
        return ind, one_hot
    pi1 = (logits / temperature).softmax(dim = dim)
    one_hot = one_hot + pi1 - pi1.detach()
    return ind, one_hot


def laplace_smoothing(x, n_categories, eps = 1e-5, dim = -1):
    denom = x.sum(dim = dim, keepdim = True)
    return (x + eps) / (denom + n_categories * eps)


def sample_vectors(samples, num):
    num_samples, device = samples.shape[0], samples.device
    if num_samples >= num:
        indices = torch.randperm(num_samples, device = device)[:num]
    else:
        indices = torch.randint(0, num_samples, (num,), device = device)
    return samples[indices]


def batched_sample_vectors(samples, num):
    return torch.stack([sample_vectors(sample, num) for sample in samples.unbind(dim = 0)], dim = 0)


def ema_inplace(old, new, decay, weight = None):
    weight = default(weight, 1.)
    new = new.to(old)
    old.data.lerp_(new, (1. - decay) * weight)


def straight_through(src, tgt):
    return src + (tgt - src).detach()


class Codebook(Module):
    def __init__(
        self,
        dim,
        codebook_size,
        num_codebooks = 1,
        decay = 0.8,
        eps = 1e-5,
        threshold_ema_dead_code = 2,
        reset_cluster_size = None,
        learnable_codebook = False,
        gumbel_sample = gumbel_sample,
        sample_codebook_temp = 1.,
        ema_update = True,
        manual_ema_update = False,
    ):
        super().__init__()
        self.transform_input = identity
        self.decay = decay
        self.ema_update = ema_update
        self.manual_ema_update = manual_ema_update

        embed = uniform_init(num_codebooks, codebook_size, dim)

        self.codebook_size = codebook_size
        self.num_codebooks = num_codebooks
        self.eps = eps

        self.threshold_ema_dead_code = threshold_ema_dead_code
        self.has_dead_code_replacement = threshold_ema_dead_code > 0
        self.reset_cluster_size = default(reset_cluster_size, threshold_ema_dead_code)

        self.gumbel_sample = gumbel_sample
        self.sample_codebook_temp = sample_codebook_temp

        self.replace_sample_fn = batched_sample_vectors
        self.all_reduce_fn = noop

        self.register_buffer('cluster_size', torch.ones(num_codebooks, codebook_size))
        self.register_buffer('embed_avg', embed.clone())

        self.learnable_codebook = learnable_codebook
        if learnable_codebook:
            self.embed = nn.Parameter(embed)
        else:
            self.register_buffer('embed', embed)

    def replace(self, batch_samples, batch_mask):
        for ind, (samples, mask) in enumerate(zip(batch_samples, batch_mask)):
            sampled = self.replace_sample_fn(samples.unsqueeze(0), mask.sum().item())
            sampled = sampled.squeeze(0)
            sampled = sampled.to(self.embed.data)

            self.embed.data[ind][mask] = sampled
            self.cluster_size.data[ind][mask] = self.reset_cluster_size
            self.embed_avg.data[ind][mask] = sampled * self.reset_cluster_size

    def expire_codes_(self, batch_samples):
        if not self.has_dead_code_replacement or not self.training:
            return
        expired_codes = self.cluster_size < self.threshold_ema_dead_code
        if not torch.any(expired_codes):
            return
        batch_samples = batch_samples.reshape(batch_samples.shape[0], -1, batch_samples.shape[-1])
        self.replace(batch_samples, batch_mask = expired_codes)

    def update_ema(self):
        cluster_size = laplace_smoothing(self.cluster_size, self.codebook_size, self.eps) * self.cluster_size.sum(dim = -1, keepdim = True)
        embed_normalized = self.embed_avg / cluster_size.unsqueeze(-1)
        self.embed.data.copy_(embed_normalized)

    def track_cluster_size_and_embed_avg(self, flatten, embed_onehot, mask = None, ema_update_weight = None, accum_ema_update = False):
        if exists(mask):
            embed_onehot[~mask] = 0.

        cluster_size = embed_onehot.sum(dim = 1)
        self.all_reduce_fn(cluster_size)

        embed_sum = einsum('h n d, h n c -> h c d', flatten, embed_onehot)
        embed_sum = embed_sum.contiguous()
        self.all_reduce_fn(embed_sum)

        ema_inplace(self.cluster_size, cluster_size, self.decay, ema_update_weight)
        ema_inplace(self.embed_avg, embed_sum, self.decay, ema_update_weight)

    def update_codebook(self, flatten, embed_onehot, mask = None, ema_update_weight = None, accum_ema_update = False, ema_update = None):
        ema_update = default(ema_update, self.ema_update)

        if not ema_update and not self.has_dead_code_replacement:
            return

        self.track_cluster_size_and_embed_avg(flatten, embed_onehot, mask, ema_update_weight, accum_ema_update)

        if ema_update and not self.manual_ema_update:
            self.update_ema()

        self.expire_codes_(flatten)

    def forward(self, x, sample_codebook_temp = None, mask = None, freeze_codebook = False, ema_update = None):
        ema_update = default(ema_update, self.ema_update)

        needs_codebook_dim = x.ndim < 4
        sample_codebook_temp = default(sample_codebook_temp, self.sample_codebook_temp)

        x = x.float()

        if needs_codebook_dim:
            x = x.unsqueeze(0)

        dtype = x.dtype
        flatten, unpack_one = pack_one(x, 'h * d')

        if exists(mask):
            # 'b n -> c (b h n)'
            mask = mask.reshape(1, -1).expand(flatten.shape[0], -1)

        # get maybe learnable codes
        embed = self.embed if self.learnable_codebook else self.embed.detach()
        embed = embed.to(dtype)

        dist = -cdist(flatten, embed)

        embed_ind, embed_onehot = self.gumbel_sample(dist, dim = -1, temperature = sample_codebook_temp, training = self.training)

        embed_ind = unpack_one(embed_ind, 'h *')

        if self.training:
            unpacked_onehot = unpack_one(embed_onehot, 'h * c')
            quantize = einsum('h b n c, h c d -> h b n d', unpacked_onehot, embed)
        else:
            quantize = embed[0][embed_ind]

        if self.training and not freeze_codebook:
            self.update_codebook(flatten, embed_onehot, mask = mask, ema_update = ema_update)

        if needs_codebook_dim:
            quantize, embed_ind = quantize.squeeze(0), embed_ind.squeeze(0)

        dist = unpack_one(dist, 'h * d')

        return quantize, embed_ind, dist


class VectorQuantize(Module):
    def __init__(
        self,
        dim,
        codebook_size,
        decay = 0.8,
        eps = 1e-5,
        threshold_ema_dead_code = 0,
        commitment_weight = 1.,
        ema_update = True,
        learnable_codebook = False,
        straight_through = False,
    ):
        super().__init__()
        self.dim = dim
        self.codebook_size = codebook_size
        self.project_in = nn.Identity()
        self.project_out = nn.Identity()
        self.commitment_weight = commitment_weight
        self.has_commitment_loss = commitment_weight > 0.

        assert not (ema_update and learnable_codebook), 'learnable codebook not compatible with EMA update'
        self.learnable_codebook = learnable_codebook

        gumbel_sample_fn = partial(gumbel_sample, stochastic = False, straight_through = straight_through)

        self._codebook = Codebook(
            dim = dim,
            codebook_size = codebook_size,
            decay = decay,
            eps = eps,
            threshold_ema_dead_code = threshold_ema_dead_code,
            learnable_codebook = learnable_codebook,
            gumbel_sample = gumbel_sample_fn,
            ema_update = ema_update,
        )
        self.register_buffer('zero', torch.tensor(0.), persistent = False)

    def forward(self, x, mask = None, freeze_codebook = False):
        orig_input, input_requires_grad = x, x.requires_grad
        device = x.device

        x = self.project_in(x)
        x = self._codebook.transform_input(x)

        quantize, embed_ind, distances = self._codebook(x, mask = mask, freeze_codebook = freeze_codebook)

        commit_loss = self.zero

        if self.training:
            maybe_detach = torch.detach if not self.learnable_codebook or freeze_codebook else identity
            commit_quantize = maybe_detach(quantize)

            if input_requires_grad:
                quantize = straight_through(x, quantize)

        loss = torch.tensor(0., device = device, requires_grad = self.training)

        if self.training and self.has_commitment_loss:
            if exists(mask):
                commit_loss = F.mse_loss(commit_quantize, orig_input, reduction = 'none')
                commit_loss = commit_loss[mask].mean()
            else:
                commit_loss = F.mse_loss(commit_quantize, orig_input)
            loss = loss + commit_loss * self.commitment_weight

        quantize = self.project_out(quantize)

        if exists(mask):
            quantize = torch.where(mask.unsqueeze(-1), quantize, orig_input)

        return quantize, embed_ind, loss


class SeqAutoencoder(nn.Module):
    def __init__(self, in_dim = 8, dim = 16, codebook_size = 32):
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(in_dim, dim), nn.GELU(), nn.Linear(dim, dim))
        self.vq = VectorQuantize(
            dim = dim,
            codebook_size = codebook_size,
            learnable_codebook = True,
            ema_update = False,
            threshold_ema_dead_code = 2,
        )
        self.decoder = nn.Sequential(nn.Linear(dim, dim), nn.GELU(), nn.Linear(dim, in_dim))

    def forward(self, feats, mask):
        z = self.encoder(feats)
        quantized, indices, commit_loss = self.vq(z, mask = mask)
        recon = self.decoder(quantized)
        return recon, indices, commit_loss


def lens_to_mask(lens, max_length):
    seq = torch.arange(max_length, device = lens.device)
    return seq < lens[:, None]


def main():
    torch.manual_seed(0)
    model = SeqAutoencoder()
    opt = torch.optim.Adam(model.parameters(), lr = 3e-4)

    batches = []
    for _ in range(3):
        feats = torch.randn(4, 12, 8)
        lens = torch.randint(6, 13, (4,))
        batches.append((feats, lens))

    model.train()
    for epoch in range(2):
        for feats, lens in batches:
            mask = lens_to_mask(lens, feats.shape[1])
            recon, indices, commit_loss = model(feats, mask)
            recon_loss = F.mse_loss(recon[mask], feats[mask])
            loss = recon_loss + commit_loss
            opt.zero_grad()
            loss.backward()  # expect: GG103
            opt.step()
        print(f"epoch {epoch}: loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
