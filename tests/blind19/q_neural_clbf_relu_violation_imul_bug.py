# Source: https://github.com/MIT-REALM/neural_clbf/pull/12
"""neural_clbf NeuralCLBFController (PR #12, fixing issue #11 "Strange Inplace Error Occurs Before
Beginning First Epoch"): training the inverted-pendulum CLBF fails in the Lightning backward with
"one of the variables needed for gradient computation has been modified by an inplace operation".

descent_loss computes `violation = F.relu(eps + Vdot + self.clf_lambda * V)` and then
`violation *= condition_active`. ReluBackward0 saves its output to compute its gradient; the
in-place multiplication overwrites it (the maintainer at first thought `*=` / `+=` were sugar for
out-of-place ops -- for tensors they are in place). The merged fix rewrites them out of place:
`violation = violation * condition_active`, `clbf_descent_term_lin = clbf_descent_term_lin + ...`,
`total_loss = total_loss + loss_value`. The dynamics model, the differentiable CLF-QP (a stand-in
returning the nominal LQR control and the decrease-condition relaxation), the data module and the
Lightning trainer are small stand-ins; descent_loss, boundary_loss and training_step are the
repository's.
The backward stops before it reaches the linearised descent term, so the oracle also reports
the `clbf_descent_term_lin += violation.mean()` running total as never walked (GG202).
"""
from typing import List, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


class InvertedPendulum(object):
    """Stand-in for neural_clbf.systems.InvertedPendulum (control-affine dynamics)."""
    n_dims, n_controls, dt = 2, 1, 0.01
    goal_point = torch.zeros(1, 2)
    K = torch.tensor([[2.0, 1.0]])

    def control_affine_dynamics(self, x, params=None):
        m = 1.0 if params is None else params["m"]
        theta, theta_dot = x[:, 0], x[:, 1]
        f = torch.stack([theta_dot, 9.81 * torch.sin(theta) - 0.1 * theta_dot / m], dim=1).unsqueeze(-1)
        g = torch.zeros(x.shape[0], 2, 1).type_as(x)
        g[:, 1, 0] = 1.0 / m
        return f, g

    def closed_loop_dynamics(self, x, u, params=None):
        f, g = self.control_affine_dynamics(x, params)
        return (f + torch.bmm(g, u.unsqueeze(-1))).squeeze(-1)

    def u_nominal(self, x):
        return -(x - self.goal_point.type_as(x)) @ self.K.t()


class NeuralCLBFController(nn.Module):
    """The Lightning module, reduced to what training uses."""
    def __init__(self, dynamics_model, scenarios, clbf_hidden_size=16, clf_lambda=1.0,
                 safe_level=1.0, controller_period=0.05, barrier=True):
        super().__init__()
        self.dynamics_model = dynamics_model
        self.scenarios = scenarios
        self.n_scenarios = len(scenarios)
        self.clf_lambda = clf_lambda
        self.safe_level = safe_level
        self.unsafe_level = safe_level
        self.controller_period = controller_period
        self.barrier = barrier
        self.V_nn = nn.Sequential(nn.Linear(2, clbf_hidden_size), nn.Tanh(),
                                  nn.Linear(clbf_hidden_size, clbf_hidden_size), nn.Tanh())

    def V_with_jacobian(self, x):
        x = x if x.requires_grad else x.clone().requires_grad_(True)
        V = 0.5 * (self.V_nn(x) ** 2).sum(dim=1)
        JV = torch.autograd.grad(V.sum(), x, create_graph=True)[0].unsqueeze(1)
        return V, JV

    def V(self, x):
        V, _ = self.V_with_jacobian(x)
        return V

    def V_lie_derivatives(self, x):
        _, gradh = self.V_with_jacobian(x)
        Lf_V = torch.zeros(x.shape[0], self.n_scenarios, 1).type_as(x)
        Lg_V = torch.zeros(x.shape[0], self.n_scenarios, self.dynamics_model.n_controls).type_as(x)
        Lf_Vs, Lg_Vs = [], []
        for i in range(self.n_scenarios):
            f, g = self.dynamics_model.control_affine_dynamics(x, params=self.scenarios[i])
            Lf_Vs.append(torch.bmm(gradh, f).squeeze(1))
            Lg_Vs.append(torch.bmm(gradh, g).squeeze(1))
        return torch.stack(Lf_Vs, 1), torch.stack(Lg_Vs, 1)

    def solve_CLF_QP(self, x, requires_grad=False):
        """Stand-in for the (differentiable) CLF QP: nominal control + required relaxation."""
        u = self.dynamics_model.u_nominal(x)
        V = self.V(x)
        Lf_V, Lg_V = self.V_lie_derivatives(x)
        relaxation = F.relu(Lf_V.squeeze(-1) + (Lg_V * u.unsqueeze(1)).sum(-1) + self.clf_lambda * V.unsqueeze(1))
        return u, relaxation

    def initial_loss(self, x: torch.Tensor) -> List[Tuple[str, torch.Tensor]]:
        return []

    def boundary_loss(self, x, goal_mask, safe_mask, unsafe_mask, accuracy: bool = False):
        eps = 1e-2
        loss = []
        V = self.V(x)
        V_goal_pt = self.V(self.dynamics_model.goal_point.type_as(x))
        goal_term = 1e1 * V_goal_pt.mean()
        loss.append(("CLBF goal term", goal_term))
        if self.barrier:
            V_safe = V[safe_mask]
            safe_violation = F.relu(eps + V_safe - self.safe_level)
            safe_V_term = 1e2 * safe_violation.mean()
            loss.append(("CLBF safe region term", safe_V_term))
            V_unsafe = V[unsafe_mask]
            unsafe_violation = F.relu(eps + self.unsafe_level - V_unsafe)
            unsafe_V_term = 1e2 * unsafe_violation.mean()
            loss.append(("CLBF unsafe region term", unsafe_V_term))
        return loss

    def descent_loss(self, x, goal_mask, safe_mask, unsafe_mask, accuracy: bool = False,
                     requires_grad: bool = False) -> List[Tuple[str, torch.Tensor]]:
        loss = []
        eps = 0.1
        V = self.V(x)
        if self.barrier:
            condition_active = torch.sigmoid(10 * (self.safe_level + eps - V))
        else:
            condition_active = torch.tensor(1.0)

        u_qp, qp_relaxation = self.solve_CLF_QP(x, requires_grad=requires_grad)
        qp_relaxation = torch.mean(qp_relaxation, dim=-1)

        qp_relaxation_loss = (qp_relaxation * condition_active).mean()
        loss.append(("QP relaxation", qp_relaxation_loss))

        eps = 1.0
        clbf_descent_term_lin = torch.tensor(0.0).type_as(x)
        clbf_descent_acc_lin = torch.tensor(0.0).type_as(x)
        Lf_V, Lg_V = self.V_lie_derivatives(x)
        for i, s in enumerate(self.scenarios):
            Vdot = Lf_V[:, i, :].unsqueeze(1) + torch.bmm(
                Lg_V[:, i, :].unsqueeze(1),
                u_qp.reshape(-1, self.dynamics_model.n_controls, 1),
            )
            Vdot = Vdot.reshape(V.shape)
            violation = F.relu(eps + Vdot + self.clf_lambda * V)
            violation *= condition_active
            clbf_descent_term_lin += violation.mean()  # expect: GG202
            clbf_descent_acc_lin += (violation <= eps).sum() / (
                violation.nelement() * self.n_scenarios
            )

        loss.append(("CLBF descent term (linearized)", clbf_descent_term_lin))
        if accuracy:
            loss.append(("CLBF descent accuracy (linearized)", clbf_descent_acc_lin))

        eps = 1.0
        clbf_descent_term_sim = torch.tensor(0.0).type_as(x)
        clbf_descent_acc_sim = torch.tensor(0.0).type_as(x)
        for s in self.scenarios:
            xdot = self.dynamics_model.closed_loop_dynamics(x, u_qp, params=s)
            x_next = x + self.dynamics_model.dt * xdot
            V_next = self.V(x_next)
            violation = F.relu(
                eps + (V_next - V) / self.controller_period + self.clf_lambda * V
            )
            violation *= condition_active

            clbf_descent_term_sim += violation.mean()
            clbf_descent_acc_sim += (violation <= eps).sum() / (
                violation.nelement() * self.n_scenarios
            )
        loss.append(("CLBF descent term (simulated)", clbf_descent_term_sim))
        if accuracy:
            loss.append(("CLBF descent accuracy (simulated)", clbf_descent_acc_sim))
        return loss

    def training_step(self, batch, batch_idx):
        x, goal_mask, safe_mask, unsafe_mask = batch
        component_losses = {}
        component_losses.update(self.initial_loss(x))
        component_losses.update(
            self.boundary_loss(x, goal_mask, safe_mask, unsafe_mask)
        )
        component_losses.update(
            self.descent_loss(x, goal_mask, safe_mask, unsafe_mask, requires_grad=True)
        )
        total_loss = torch.tensor(0.0).type_as(x)
        for _, loss_value in component_losses.items():
            if not torch.isnan(loss_value):
                total_loss += loss_value
        batch_dict = {"loss": total_loss, **component_losses}
        return batch_dict

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=1e-3, weight_decay=1e-6)


def episodic_datamodule(n_batches=2, batch_size=16):
    """Stand-in for EpisodicDataModule: states and goal / safe / unsafe masks."""
    for _ in range(n_batches):
        x = (torch.rand(batch_size, 2) - 0.5) * 4.0
        norm = x.norm(dim=1)
        yield x, norm <= 0.3, norm <= 1.5, norm >= 1.8


class Trainer(object):
    """Stand-in for pl.Trainer: backward on the "loss" that training_step returns."""
    def __init__(self, max_epochs=1):
        self.max_epochs = max_epochs

    def fit(self, model):
        optimizer = model.configure_optimizers()
        for epoch in range(self.max_epochs):
            for batch_idx, batch in enumerate(episodic_datamodule()):
                out = model.training_step(batch, batch_idx)
                optimizer.zero_grad()
                out["loss"].backward()  # expect: GG103
                optimizer.step()
                print("epoch", epoch, "batch", batch_idx, "loss", out["loss"].item())


scenarios = [{"m": 1.0}, {"m": 1.25}]
clbf_controller = NeuralCLBFController(InvertedPendulum(), scenarios)
trainer = Trainer(max_epochs=1)
trainer.fit(clbf_controller)
