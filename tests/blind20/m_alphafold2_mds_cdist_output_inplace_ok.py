# Source: https://github.com/lucidrains/alphafold2/commit/8d5e94878a0f6b834597aa7ae352096b44b1d7b7
"""alphafold2-pytorch (lucidrains), before commit 8d5e948 "solve inplace. sorry for masked_fills".

The model predicts a distogram; ``center_distogram_torch`` turns it into expected distances and
weights, and ``mds_torch`` (through the ``MDScaling`` wrapper) runs a few iterations of the SMACOF /
Guttman transform to get 3d coordinates, which a structure module refines and the loss compares with
the true coordinates. Inside the MDS loop::

    dist_mat = torch.cdist(best_3d_coords, best_3d_coords, p=2)
    stress   = ( weights * (dist_mat - pre_dist_mat)**2 ).sum(dim=(-1,-2)) * 0.5
    dist_mat[ dist_mat == 0 ] += 1e-7

From the second iteration on, ``best_3d_coords`` depends on the predicted distances, so the cdist
output is part of the graph and cdist's backward needs that output. The masked ``+=`` writes into
it (index_put_), and ``loss.backward()`` fails with "one of the variables needed for gradient
computation has been modified by an inplace operation".

This is the fixed version. Fix (the commit): compute ``dist_mat = torch.cdist(...).clone()`` and write the epsilon into the
clone (``dist_mat[dist_mat == 0] = 1e-7``).
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim import Adam

torch.manual_seed(0)
np.random.seed(0)

DISTOGRAM_BUCKETS = 37
DISTANCE_THRESHOLDS = torch.linspace(2, 20, steps=DISTOGRAM_BUCKETS)


# ---- alphafold2_pytorch/utils.py -------------------------------------------------------------

def expand_dims_to(t, length=3):
    if length == 0:
        return t
    return t.reshape(*((1,) * length), *t.shape)  # will work with both torch and numpy


def center_distogram_torch(distogram, bins=DISTANCE_THRESHOLDS, min_t=1., center="mean", wide="std"):
    """ Returns the central estimate of a distogram. """
    shape, device = distogram.shape, distogram.device
    # threshold to weights and find mean value of each bin
    n_bins = (bins - 0.5 * (bins[2] - bins[1])).to(device)
    n_bins[0] = 1.5
    n_bins[-1] = 1.33 * bins[-1]  # above last threshold is ignored
    max_bin_allowed = torch.tensor(n_bins.shape[0] - 1).to(device).long()
    # calculate measures of centrality and dispersion -
    if center == "median":
        cum_dist = torch.cumsum(distogram, dim=-1)
        medium = 0.5 * torch.ones(*cum_dist.shape[:-1], 1, device=device)
        central = torch.searchsorted(cum_dist, medium).squeeze()
        central = n_bins[torch.min(central, max_bin_allowed)]
    elif center == "mean":
        central = (distogram * n_bins).sum(dim=-1)
    # create mask for last class - (IGNORE_INDEX)
    mask = (central <= bins[-2].item()).float()
    # mask diagonal to 0 dist - don't do masked filling to avoid inplace errors
    diag_idxs = np.arange(shape[-2])
    central = expand_dims_to(central, 3 - len(central.shape))
    central[:, diag_idxs, diag_idxs] *= 0.
    # provide weights
    if wide == "var":
        dispersion = (distogram * (n_bins - central.unsqueeze(-1)) ** 2).sum(dim=-1)
    elif wide == "std":
        dispersion = (distogram * (n_bins - central.unsqueeze(-1)) ** 2).sum(dim=-1).sqrt()
    else:
        dispersion = torch.zeros_like(central, device=device)
    # rescale to 0-1. lower std / var  --> weight=1. set potential nan's to 0
    weights = mask / (1 + dispersion)
    weights[weights != weights] = 0.
    return central, weights


def mds_torch(pre_dist_mat, weights=None, iters=10, tol=1e-5, verbose=2):
    """ Gets distance matrix. Outputs 3d. """
    device = pre_dist_mat.device

    if weights is None:
        weights = torch.ones_like(pre_dist_mat)

    # ensure batched MDS
    pre_dist_mat = expand_dims_to(pre_dist_mat, length=(3 - len(pre_dist_mat.shape)))

    # start
    batch, N, _ = pre_dist_mat.shape
    diag_idxs = np.arange(N)
    his = []
    # init random coords
    best_stress = float("Inf") * torch.ones(batch, device=device)
    best_3d_coords = 2 * torch.rand(batch, N, 3, device=device) - 1
    # iterative updates:
    for i in range(iters):
        # compute distance matrix of coords and stress
        dist_mat = torch.cdist(best_3d_coords, best_3d_coords, p=2).clone()
        stress = (weights * (dist_mat - pre_dist_mat) ** 2).sum(dim=(-1, -2)) * 0.5
        # perturb - update X using the Guttman transform - sklearn-like
        dist_mat[dist_mat == 0] = 1e-7
        ratio = weights * (pre_dist_mat / dist_mat)
        B = -ratio
        B[:, diag_idxs, diag_idxs] += ratio.sum(dim=-1)

        # update
        coords = (1. / N * torch.matmul(B, best_3d_coords))
        dis = torch.norm(coords, dim=(-1, -2))
        if verbose >= 2:
            print('it: %d, stress %s' % (i, stress))
        # update metrics if relative improvement above tolerance
        if (best_stress - stress / dis).mean() <= tol:
            if verbose:
                print('breaking at iteration %d with stress %s' % (i, stress / dis))
            break

        best_3d_coords = coords
        best_stress = (stress / dis)
        his.append(best_stress)

    return torch.transpose(best_3d_coords, -1, -2), torch.cat(his)


def MDScaling(pre_dist_mat, weights=None, iters=10, tol=1e-5, fix_mirror=True,
              N_mask=None, CA_mask=None, C_mask=None, verbose=2):
    # torch backend of the wrapper (mdscaling_torch); mirrors are not fixed here (fix_mirror=0)
    pre_dist_mat = expand_dims_to(pre_dist_mat, 3 - len(pre_dist_mat.shape))
    preds, stresses = mds_torch(pre_dist_mat, weights=weights, iters=iters,
                                tol=tol, verbose=verbose)
    return preds, stresses


# ---- alphafold2_pytorch/alphafold2.py (small stand-in of the trunk) ---------------------------

class Alphafold2(nn.Module):
    def __init__(self, dim=32, num_tokens=21, predict_coords=True):
        super().__init__()
        self.token_emb = nn.Embedding(num_tokens, dim)
        self.pair_proj = nn.Linear(dim, dim)
        self.to_distogram_logits = nn.Sequential(
            nn.LayerNorm(dim),
            nn.Linear(dim, DISTOGRAM_BUCKETS)
        )
        self.structure_module_embeds = nn.Embedding(num_tokens, dim)
        self.to_coords_update = nn.Linear(dim + 3, 3)
        self.predict_coords = predict_coords

    def forward(self, seq):
        x = self.token_emb(seq)                                   # (b, n, d)
        x = self.pair_proj(x[:, :, None, :] + x[:, None, :, :])   # (b, n, n, d)
        x = (x + x.transpose(1, 2)) * 0.5  # symmetrize
        distogram_logits = self.to_distogram_logits(x).softmax(dim=-1)

        if not self.predict_coords:
            return distogram_logits

        # structural refinement
        coords = []
        for distogram in distogram_logits:
            distances, weights = center_distogram_torch(distogram)

            coords_3d, _ = MDScaling(distances,
                weights=weights,
                iters=5,
                fix_mirror=0
            )

            coords_3d = coords_3d.transpose(-1, -2)  # 'b c n -> b n c'
            coords.append(coords_3d)

        coords = torch.cat(coords, dim=0)
        x = self.structure_module_embeds(seq)
        refined = coords + self.to_coords_update(torch.cat((x, coords), dim=-1))
        return refined


# ---- train_end2end.py ------------------------------------------------------------------------

NUM_BATCHES = 2
GRADIENT_ACCUMULATE_EVERY = 2
LEARNING_RATE = 3e-4

model = Alphafold2(dim=32)
criterion = nn.MSELoss()
optim = Adam(model.parameters(), lr=LEARNING_RATE)


def pairwise_dists(c):
    return torch.cdist(c, c)


for _ in range(NUM_BATCHES):
    for _ in range(GRADIENT_ACCUMULATE_EVERY):
        seq = torch.randint(0, 21, (1, 8))
        true_coords = torch.randn(1, 8, 3) * 3

        refined = model(seq)

        # loss on pairwise distances (rotation invariant)
        loss = torch.sqrt(criterion(pairwise_dists(refined), pairwise_dists(true_coords)))

        loss.backward()

    print('loss:', loss.item())

    optim.step()
    optim.zero_grad()
