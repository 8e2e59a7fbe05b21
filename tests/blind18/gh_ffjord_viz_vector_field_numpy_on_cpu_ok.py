# Source: https://github.com/rtqichen/ffjord/pull/3
"""Fixed twin (the PR's final commit "Detach for everything": `-dydt.cpu().detach().numpy()`). FFJORD, diagnostics/viz_toy.py `save_trajectory`: the whole visualisation runs under `torch.no_grad()`,
but `ODEfunc.forward` switches grad back on (`torch.set_grad_enabled(True)`, `y.requires_grad_(True)`) to
take the divergence, so the vector field `dydt = cnf.odefunc(integration_times[t], (zs, logps))[0]` requires
grad. On a GPU `dydt.cpu()` is a copy made under no_grad, but on a CPU-only machine `.cpu()` returns the
tensor itself and `-dydt.cpu().numpy()` raises "Can't call numpy() on Tensor that requires grad". Fix (the
PR's final commit): `-dydt.cpu().detach().numpy()` for every device. torchdiffeq's `odeint` is a small
fixed-step RK4 stand-in, the CNF a 2-D ConcatLinear net; matplotlib's drawing is replaced by collecting the
frames' arrays (no files written); `divergence_bf` is the file's own Jacobian-based variant (left commented
out there); tiny grid, 3 time points, CPU.
"""
import math

import numpy as np
import torch
import torch.nn as nn


# ---- torchdiffeq stand-in ----
def odeint(func, y0, t, atol=None, rtol=None, method=None, options=None):
    """Fixed-step RK4 over the given times; returns a tuple of stacked states like torchdiffeq."""
    ys = [tuple(y0)]
    y = tuple(y0)
    for i in range(len(t) - 1):
        t0, t1 = t[i], t[i + 1]
        h = t1 - t0
        k1 = func(t0, y)
        k2 = func(t0 + h / 2, tuple(y_ + h / 2 * k_ for y_, k_ in zip(y, k1)))
        k3 = func(t0 + h / 2, tuple(y_ + h / 2 * k_ for y_, k_ in zip(y, k2)))
        k4 = func(t1, tuple(y_ + h * k_ for y_, k_ in zip(y, k3)))
        y = tuple(y_ + h / 6 * (a + 2 * b + 2 * c + d) for y_, a, b, c, d in zip(y, k1, k2, k3, k4))
        ys.append(y)
    return tuple(torch.stack([s[j] for s in ys]) for j in range(len(y0)))


# ---- lib/layers/diffeq_layers ----
class ConcatLinear(nn.Module):
    def __init__(self, dim_in, dim_out):
        super(ConcatLinear, self).__init__()
        self._layer = nn.Linear(dim_in + 1, dim_out)

    def forward(self, t, x):
        tt = torch.ones_like(x[:, :1]) * t
        ttx = torch.cat([tt, x], 1)
        return self._layer(ttx)


# ---- lib/layers/odefunc.py ----
def _get_minibatch_jacobian(y, x):
    """Computes the Jacobian of y wrt x assuming minibatch-mode."""
    assert y.shape[0] == x.shape[0]
    y = y.view(y.shape[0], -1)
    # Compute Jacobian row by row.
    jac = []
    for j in range(y.shape[1]):
        dy_j_dx = torch.autograd.grad(y[:, j], x, torch.ones_like(y[:, j]), retain_graph=True,
                                      create_graph=True)[0].view(x.shape[0], -1)
        jac.append(torch.unsqueeze(dy_j_dx, 1))
    jac = torch.cat(jac, 1)
    return jac


def divergence_bf(f, y, **unused_kwargs):
    jac = _get_minibatch_jacobian(f, y)
    diagonal = jac.view(jac.shape[0], -1)[:, ::jac.shape[1]]
    return torch.sum(diagonal, 1)


def divergence_approx(f, y, e=None):
    e_dzdx = torch.autograd.grad(f, y, e, create_graph=True)[0]
    e_dzdx_e = e_dzdx * e
    approx_tr_dzdx = e_dzdx_e.view(y.shape[0], -1).sum(dim=1)
    return approx_tr_dzdx


def sample_gaussian_like(y):
    return torch.randn_like(y)


class ODEnet(nn.Module):
    def __init__(self, hidden_dims, input_shape):
        super(ODEnet, self).__init__()
        layers = []
        activation_fns = []
        hidden_shape = input_shape
        for dim_out in hidden_dims + (input_shape[0],):
            layers.append(ConcatLinear(hidden_shape[0], dim_out))
            activation_fns.append(nn.Softplus())
            hidden_shape = (dim_out,)
        self.layers = nn.ModuleList(layers)
        self.activation_fns = nn.ModuleList(activation_fns[:-1])

    def forward(self, t, y):
        dx = y
        for l, layer in enumerate(self.layers):
            dx = layer(t, dx)
            if l < len(self.layers) - 1:
                dx = self.activation_fns[l](dx)
        return dx


class ODEfunc(nn.Module):
    def __init__(self, diffeq, divergence_fn="approximate", residual=False, rademacher=False):
        super(ODEfunc, self).__init__()
        self.diffeq = diffeq
        self.residual = residual
        self.rademacher = rademacher
        self.divergence_fn = divergence_bf if divergence_fn == "brute_force" else divergence_approx
        self.register_buffer("_num_evals", torch.tensor(0.))

    def before_odeint(self, e=None):
        self._e = e
        self._num_evals.fill_(0)

    def forward(self, t, states):
        assert len(states) >= 2
        y = states[0]
        self._num_evals += 1
        t = torch.as_tensor(t).type_as(y).clone()
        batchsize = y.shape[0]
        if self._e is None:
            self._e = sample_gaussian_like(y)
        with torch.set_grad_enabled(True):
            y.requires_grad_(True)
            t.requires_grad_(True)
            dy = self.diffeq(t, y)
            # Hack for 2D data to use brute force divergence computation.
            if not self.training and dy.view(dy.shape[0], -1).shape[1] == 2:
                divergence = divergence_bf(dy, y).view(batchsize, 1)
            else:
                divergence = self.divergence_fn(dy, y, e=self._e).view(batchsize, 1)
        return tuple([dy, -divergence])


# ---- lib/layers/cnf.py, container.py ----
def _flip(x, dim):
    indices = [slice(None)] * x.dim()
    indices[dim] = torch.arange(x.size(dim) - 1, -1, -1, dtype=torch.long, device=x.device)
    return x[tuple(indices)]


class CNF(nn.Module):
    def __init__(self, odefunc, T=1.0, solver='rk4'):
        super(CNF, self).__init__()
        self.register_buffer("sqrt_end_time", torch.sqrt(torch.tensor(T)))
        self.odefunc = odefunc
        self.solver = solver

    def forward(self, z, logpz=None, integration_times=None, reverse=False):
        _logpz = torch.zeros(z.shape[0], 1).to(z) if logpz is None else logpz
        if integration_times is None:
            integration_times = torch.tensor([0.0, self.sqrt_end_time * self.sqrt_end_time]).to(z)
        if reverse:
            integration_times = _flip(integration_times, 0)
        self.odefunc.before_odeint()
        state_t = odeint(self.odefunc, (z, _logpz), integration_times.to(z), method=self.solver)
        if len(integration_times) == 2:
            state_t = tuple(s[1] for s in state_t)
        z_t, logpz_t = state_t[:2]
        if logpz is not None:
            return z_t, logpz_t
        return z_t


class SequentialFlow(nn.Module):
    def __init__(self, layersList):
        super(SequentialFlow, self).__init__()
        self.chain = nn.ModuleList(layersList)


# ---- diagnostics/viz_toy.py ----
def standard_normal_logprob(z):
    logZ = -0.5 * math.log(2 * math.pi)
    return logZ - z.pow(2) / 2


def save_trajectory(model, data_samples, savedir, ntimes=101, memory=0.01, device='cpu'):
    model.eval()
    frames = []  # stand-in for the jpgs plt.savefig wrote into savedir

    #  Sample from prior
    z_samples = torch.randn(64, 2).to(device)

    # sample from a grid
    npts = 12
    side = np.linspace(-4, 4, npts)
    xx, yy = np.meshgrid(side, side)
    xx = torch.from_numpy(xx).type(torch.float32).to(device)
    yy = torch.from_numpy(yy).type(torch.float32).to(device)
    z_grid = torch.cat([xx.reshape(-1, 1), yy.reshape(-1, 1)], 1)

    with torch.no_grad():
        # The model is a chain of CNF layers wrapped in a SequentialFlow container.
        logp_samples = torch.sum(standard_normal_logprob(z_samples), 1, keepdim=True)
        logp_grid = torch.sum(standard_normal_logprob(z_grid), 1, keepdim=True)
        t = 0
        for cnf in model.chain:
            end_time = (cnf.sqrt_end_time * cnf.sqrt_end_time)
            integration_times = torch.linspace(0, end_time, ntimes)

            z_traj, _ = cnf(z_samples, logp_samples, integration_times=integration_times, reverse=True)
            z_traj = z_traj.cpu().numpy()

            grid_z_traj, grid_logpz_traj = [], []
            inds = torch.arange(0, z_grid.shape[0]).to(torch.int64)
            for ii in torch.split(inds, int(z_grid.shape[0] * memory)):
                _grid_z_traj, _grid_logpz_traj = cnf(
                    z_grid[ii], logp_grid[ii], integration_times=integration_times, reverse=True
                )
                _grid_z_traj, _grid_logpz_traj = _grid_z_traj.cpu().numpy(), _grid_logpz_traj.cpu().numpy()
                grid_z_traj.append(_grid_z_traj)
                grid_logpz_traj.append(_grid_logpz_traj)
            grid_z_traj = np.concatenate(grid_z_traj, axis=1)
            grid_logpz_traj = np.concatenate(grid_logpz_traj, axis=1)

            for _ in range(z_traj.shape[0]):
                # the density
                z, logqz = grid_z_traj[t], grid_logpz_traj[t]
                xx = z[:, 0].reshape(npts, npts)
                yy = z[:, 1].reshape(npts, npts)
                qz = np.exp(logqz).reshape(npts, npts)

                # the samples
                zk = z_traj[t]

                # the vector field
                K = 5j
                y, x = np.mgrid[-4:4:K, -4:4:K]
                K = int(K.imag)
                zs = torch.from_numpy(np.stack([x, y], -1).reshape(K * K, 2)).to(device, torch.float32)
                logps = torch.zeros(zs.shape[0], 1).to(device, torch.float32)
                dydt = cnf.odefunc(integration_times[t], (zs, logps))[0]
                dydt = -dydt.cpu().detach().numpy()
                dydt = dydt.reshape(K, K, 2)

                logmag = 2 * np.log(np.hypot(dydt[:, :, 0], dydt[:, :, 1]))
                frames.append((data_samples, xx, yy, qz, zk, x, y, dydt, np.exp(logmag)))
                t += 1
    return frames


def build_model_tabular(dims=(16, 16), num_blocks=1):
    chain = [CNF(ODEfunc(ODEnet(dims, (2,)), divergence_fn="brute_force")) for _ in range(num_blocks)]
    return SequentialFlow(chain)


if __name__ == '__main__':
    torch.manual_seed(0)
    device = torch.device('cpu')
    model = build_model_tabular().to(device)
    # toy_data.inf_train_gen('8gaussians') stand-in
    centers = np.array([(math.cos(a), math.sin(a)) for a in np.linspace(0, 2 * math.pi, 8, endpoint=False)]) * 2.8
    data_samples = centers[np.random.randint(8, size=200)] + 0.3 * np.random.randn(200, 2)
    frames = save_trajectory(model, data_samples, 'trajectory', ntimes=3, memory=0.5, device=device)
    print(len(frames), "frames")
