# Source: https://github.com/PythonOT/POT/pull/474
"""POT's barycenter_stabilized with the fix of PR 474: the log's `logu`/`logv` are computed with
the backend's log (nx.log, here torch.log) instead of np.log, so the function returns tensors and
never converts the scaling vectors, which require grad, to NumPy. The torch backend calls are
written as the torch functions they dispatch to; two Gaussian histograms whose means are learned
through the barycenter stand in for the reporter's data."""
import warnings

import torch


def geometricBar(weights, alldistribT):
    """return the weighted geometric mean of distributions"""
    assert (len(weights) == alldistribT.shape[1])
    return torch.exp(torch.log(alldistribT) @ weights.T)


def barycenter_stabilized(A, M, reg, tau=1e10, weights=None, numItermax=1000,
                          stopThr=1e-4, verbose=False, log=False, warn=True):
    dim, n_hists = A.shape
    if weights is None:
        weights = torch.ones((n_hists,), dtype=M.dtype) / n_hists
    else:
        assert (len(weights) == A.shape[1])

    if log:
        log = {'err': []}

    u = torch.ones((dim, n_hists), dtype=M.dtype) / dim
    v = torch.ones((dim, n_hists), dtype=M.dtype) / dim

    K = torch.exp(-M / reg)

    err = 1.
    alpha = torch.zeros((dim,), dtype=M.dtype)
    beta = torch.zeros((dim,), dtype=M.dtype)
    q = torch.ones((dim,), dtype=M.dtype) / dim
    for ii in range(numItermax):
        qprev = q
        Kv = K @ v
        u = A / Kv
        Ktu = K.T @ u
        q = geometricBar(weights, Ktu)
        Q = q[:, None]
        v = Q / Ktu
        absorbing = False
        if torch.any(u > tau) or torch.any(v > tau):
            absorbing = True
            alpha = alpha + reg * torch.log(torch.max(u, 1)[0])
            beta = beta + reg * torch.log(torch.max(v, 1)[0])
            K = torch.exp((alpha[:, None] + beta[None, :] - M) / reg)
            v = torch.ones(tuple(v.shape), dtype=v.dtype)
        Kv = K @ v
        if (torch.any(Ktu == 0.)
                or torch.any(torch.isnan(u)) or torch.any(torch.isnan(v))
                or torch.any(torch.isinf(u)) or torch.any(torch.isinf(v))):
            # we have reached the machine precision
            # come back to previous solution and quit loop
            warnings.warn('Numerical errors at iteration %s' % ii)
            q = qprev
            break
        if (ii % 10 == 0 and not absorbing) or ii == 0:
            # we can speed up the process by checking for the error only all
            # the 10th iterations
            err = torch.max(torch.abs(u * Kv - A))
            if log:
                log['err'].append(err)
            if err < stopThr:
                break
            if verbose:
                if ii % 50 == 0:
                    print('{:5s}|{:12s}'.format('It.', 'Err') + '\n' + '-' * 19)
                print('{:5d}|{:8e}|'.format(ii, err))
    else:
        if warn:
            warnings.warn("Stabilized Sinkhorn did not converge." +
                          "Try a larger entropy `reg`" +
                          "Or a larger absorption threshold `tau`.")
    if log:
        log['niter'] = ii
        log['logu'] = torch.log(u + 1e-16)
        log['logv'] = torch.log(v + 1e-16)
        return q, log
    else:
        return q


def gauss_hist(x, mean, std):
    h = torch.exp(-(x - mean) ** 2 / (2 * std ** 2))
    return h / h.sum()


n = 30
x = torch.arange(n, dtype=torch.float64)
M = (x[:, None] - x[None, :]) ** 2
M = M / M.max()
means = torch.tensor([8.0, 20.0], dtype=torch.float64, requires_grad=True)
target = gauss_hist(x, torch.tensor(12.0, dtype=torch.float64), 3.0)
optimizer = torch.optim.SGD([means], lr=50.0)
for it in range(3):
    A = torch.stack([gauss_hist(x, means[0], 3.0), gauss_hist(x, means[1], 3.0)], dim=1)
    bary, log = barycenter_stabilized(A, M, reg=1e-2, numItermax=200, log=True, warn=False)
    loss = ((bary - target) ** 2).sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(it, loss.item(), log['niter'])
