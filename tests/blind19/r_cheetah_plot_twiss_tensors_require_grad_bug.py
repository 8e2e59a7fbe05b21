# Source: https://github.com/desy-ml/cheetah/issues/287
"""Cheetah (differentiable beam dynamics): Segment.plot_twiss fails once a lattice parameter
requires grad.

Cheetah users make element parameters (drift lengths, quadrupole strengths) ``requires_grad``
tensors and tune them with torch optimizers.  Afterwards ``segment.plot_twiss(incoming=beam)``
tracks the beam through the elements, stacks the s positions and beta functions -- all computed
from those parameters, so they carry a grad_fn -- and hands them to matplotlib's ``ax.plot``.
matplotlib converts its arguments with numpy (``Tensor.__array__`` -> ``.numpy()``) and torch
raises "Can't call numpy() on Tensor that requires grad".

Fix (PR #288, "Call tensor.detach before passing into matplotlib"): detach the plotted tensors.
Stand-ins: a small matplotlib Axes/figure whose ``plot`` converts data with numpy like matplotlib,
and a reduced Cheetah (ParameterBeam with Twiss parameters, Drift, thin Quadrupole, Segment with
the real ``plot_twiss`` body).
"""
from typing import Any, Optional

import numpy as np
import torch
from torch import nn


# ---- stand-in for matplotlib.pyplot ----
class _Axes:
    def plot(self, *args, **kwargs):
        return [np.asarray(a, dtype=float) for a in args]  # expect: GG107

    def set_title(self, s):
        pass

    def set_xlabel(self, s):
        pass

    def set_ylabel(self, s):
        pass

    def legend(self):
        pass


class _Figure:
    def add_subplot(self, *args):
        return _Axes()


class plt:
    Axes = _Axes

    @staticmethod
    def figure(**kwargs):
        return _Figure()

    @staticmethod
    def tight_layout():
        pass


# ---- reduced cheetah ----
class ParameterBeam:
    def __init__(self, alpha_x, beta_x, alpha_y, beta_y):
        self.alpha_x, self.beta_x = alpha_x, beta_x
        self.alpha_y, self.beta_y = alpha_y, beta_y

    @classmethod
    def from_parameters(cls, alpha_x=0.0, beta_x=5.0, alpha_y=0.0, beta_y=5.0):
        return cls(torch.tensor(alpha_x), torch.tensor(beta_x), torch.tensor(alpha_y), torch.tensor(beta_y))


def _transport_twiss(r, alpha, beta):
    gamma = (1 + alpha ** 2) / beta
    r11, r12, r21, r22 = r[0][0], r[0][1], r[1][0], r[1][1]
    new_beta = r11 ** 2 * beta - 2 * r11 * r12 * alpha + r12 ** 2 * gamma
    new_alpha = -r11 * r21 * beta + (r11 * r22 + r12 * r21) * alpha - r12 * r22 * gamma
    return new_alpha, new_beta


class Element(nn.Module):
    def __init__(self, length):
        super().__init__()
        self.length = length

    def transfer_maps(self):
        raise NotImplementedError

    def track(self, incoming):
        rx, ry = self.transfer_maps()
        alpha_x, beta_x = _transport_twiss(rx, incoming.alpha_x, incoming.beta_x)
        alpha_y, beta_y = _transport_twiss(ry, incoming.alpha_y, incoming.beta_y)
        return ParameterBeam(alpha_x, beta_x, alpha_y, beta_y)


class Drift(Element):
    def transfer_maps(self):
        one, zero = torch.ones_like(self.length), torch.zeros_like(self.length)
        r = [[one, self.length], [zero, one]]
        return r, r


class Quadrupole(Element):
    def __init__(self, length, k1):
        super().__init__(length)
        self.k1 = k1

    def transfer_maps(self):
        one, zero = torch.ones_like(self.length), torch.zeros_like(self.length)
        kl = self.k1 * self.length
        return [[one, zero], [-kl, one]], [[one, zero], [kl, one]]


class Segment(Element):
    def __init__(self, elements, name="unnamed"):
        super().__init__(sum(e.length for e in elements))
        self.elements = elements
        self.name = name

    def track(self, incoming):
        for element in self.elements:
            incoming = element.track(incoming)
        return incoming

    def plot_twiss(self, incoming, ax: Optional[Any] = None, vector_idx: Optional[tuple] = None) -> None:
        """Plot twiss parameters along the segment."""
        longitudinal_beams = [incoming]
        s_positions = [torch.tensor(0.0)]
        for element in self.elements:
            if torch.all(element.length == 0):
                continue

            outgoing = element.track(longitudinal_beams[-1])

            longitudinal_beams.append(outgoing)
            s_positions.append(s_positions[-1] + element.length)

        beta_x = [beam.beta_x for beam in longitudinal_beams]
        beta_y = [beam.beta_y for beam in longitudinal_beams]

        broadcast_s_positions = torch.broadcast_tensors(*s_positions)
        stacked_s_positions = torch.stack(broadcast_s_positions)
        dimension_reordered_s_positions = stacked_s_positions.movedim(0, -1)
        plot_s_positions = (
            dimension_reordered_s_positions[vector_idx]
            if stacked_s_positions.dim() > 1
            else dimension_reordered_s_positions
        )

        broadcast_beta_x = torch.broadcast_tensors(*beta_x)
        stacked_beta_x = torch.stack(broadcast_beta_x)
        dimension_reordered_beta_x = stacked_beta_x.movedim(0, -1)
        plot_beta_x = (
            dimension_reordered_beta_x[vector_idx]
            if stacked_beta_x.dim() > 2
            else dimension_reordered_beta_x
        )

        broadcast_beta_y = torch.broadcast_tensors(*beta_y)
        stacked_beta_y = torch.stack(broadcast_beta_y)
        dimension_reordered_beta_y = stacked_beta_y.movedim(0, -1)
        plot_beta_y = (
            dimension_reordered_beta_y[vector_idx]
            if stacked_beta_y.dim() > 2
            else dimension_reordered_beta_y
        )

        if ax is None:
            fig = plt.figure()
            ax = fig.add_subplot(111)

        ax.set_title("Twiss Parameters")
        ax.set_xlabel("s (m)")
        ax.set_ylabel(r"$\beta$ (m)")

        ax.plot(plot_s_positions, plot_beta_x, label=r"$\beta_x$", c="tab:red")
        ax.plot(plot_s_positions, plot_beta_y, label=r"$\beta_y$", c="tab:green")

        ax.legend()
        plt.tight_layout()


# ---- user script: tune the quadrupole, then look at the beta functions ----
torch.manual_seed(0)
k1 = torch.tensor(0.5, requires_grad=True)
segment = Segment(
    elements=[
        Drift(length=torch.tensor(1.0, requires_grad=True)),
        Quadrupole(length=torch.tensor(0.2), k1=k1),
        Drift(length=torch.tensor(2.0)),
    ]
)
beam = ParameterBeam.from_parameters()

optimizer = torch.optim.Adam([k1, segment.elements[0].length], lr=0.05)
for step in range(20):
    optimizer.zero_grad()
    outgoing = segment.track(beam)
    loss = outgoing.beta_x + outgoing.beta_y
    loss.backward()
    optimizer.step()
print(k1.item(), loss.item())

segment.plot_twiss(incoming=beam)
