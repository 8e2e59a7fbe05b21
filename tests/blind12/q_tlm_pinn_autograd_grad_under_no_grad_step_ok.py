# Source: https://github.com/fabiodimarco/torch-levenberg-marquardt/issues/7
"""Fixed twin of q_tlm_pinn_autograd_grad_under_no_grad_step_bug.py. The user ports a PINN for
u' = 4*pi*cos(2*pi*t), u(0) = 1 to torch-levenberg-marquardt: the model's forward took u_t with
`torch.autograd.grad(u, t, ...)` of a global `t`, but the library runs the model inside its
`@torch.no_grad()` training step, so torch raised "element 0 of tensors does not require grad and
does not have a grad_fn". Here the maintainer's fix from the thread: u_t is taken with torch.func
inside forward, at fresh collocation points, which works under the library's no_grad, with
`use_vmap=False`; the maintainer used `vjp`, this twin `jvp` (the same derivative for a pointwise
network, and no retained graph left unused). torch_levenberg_marquardt (module, loss, fit) is a
small stand-in written in the file; its Jacobian is taken one residual at a time (the library uses
torch.func.jacrev).
"""
import math as m

import torch
import torch.nn as nn
import torch.utils.data
from torch.func import functional_call, jvp


class tlm:
    """Stand-in for the parts of torch_levenberg_marquardt the script uses."""

    class loss:
        class MSELoss:
            def __call__(self, y_true, y_pred):
                return (y_pred - y_true).pow(2).mean()

            def residuals(self, y_true, y_pred):
                return (y_pred - y_true).flatten()

    class training:
        class LevenbergMarquardtModule:
            def __init__(self, model, loss_fn, learning_rate=1.0, damping_start=1e-3, use_vmap=True):
                self._model = model
                self.loss_fn = loss_fn
                self.learning_rate = learning_rate
                self.damping = damping_start
                self.use_vmap = use_vmap
                self._params = {n: p for n, p in model.named_parameters()}
                self._names = list(self._params)
                self._shapes = [p.shape for p in self._params.values()]
                self._numels = [p.numel() for p in self._params.values()]

            def forward(self, inputs):
                return functional_call(self._model, self._params, (inputs,))

            @torch.no_grad()
            def _compute_jacobian(self, inputs, targets):
                # one reverse pass per residual (the library uses torch.func.jacrev, vmapped or not)
                params = list(self._params.values())
                with torch.enable_grad():
                    residuals = self.loss_fn.residuals(targets, self.forward(inputs))
                    rows = []
                    for k in range(residuals.shape[0]):
                        grads = torch.autograd.grad(residuals[k], params, retain_graph=k < residuals.shape[0] - 1,
                                                    allow_unused=True)
                        rows.append(torch.cat([(g if g is not None else torch.zeros_like(p)).flatten()
                                               for g, p in zip(grads, params)]))
                return torch.stack(rows)

            @torch.no_grad()
            def training_step(self, inputs, targets):
                outputs = self.forward(inputs)
                loss = self.loss_fn(targets, outputs)
                residuals = self.loss_fn.residuals(targets, outputs)
                J = self._compute_jacobian(inputs, targets)
                JJ = J.T @ J
                rhs = J.T @ residuals
                backup = [p.detach().clone() for p in self._params.values()]
                for _ in range(5):
                    A = JJ + self.damping * torch.eye(JJ.shape[0])
                    updates = torch.linalg.solve(A, rhs)
                    offset = 0
                    for p, n in zip(self._params.values(), self._numels):
                        p.sub_(self.learning_rate * updates[offset:offset + n].view_as(p))
                        offset += n
                    new_loss = self.loss_fn(targets, self.forward(inputs))
                    if new_loss < loss:
                        self.damping = max(self.damping / 10.0, 1e-10)
                        return new_loss
                    for p, b in zip(self._params.values(), backup):
                        p.copy_(b)
                    self.damping *= 10.0
                return loss

    class utils:
        @staticmethod
        def fit(module, dataloader, epochs):
            for epoch in range(epochs):
                for inputs, targets in dataloader:
                    loss = module.training_step(inputs, targets)
                print(f"epoch {epoch}: loss {loss.item():.4e}")


num_steps = 100


class PINN(nn.Module):
    def __init__(self):
        super().__init__()
        self.model = nn.Sequential(
            nn.Linear(1, 16),
            nn.Tanh(),
            nn.Linear(16, 16),
            nn.Tanh(),
            nn.Linear(16, 1),
        )

    def forward(self, dummy):
        t0 = torch.zeros((1, 1))
        u_ic = self.model(t0)

        t = torch.rand(num_steps, 1) * 1.5

        u, u_t = jvp(self.model, (t,), (torch.ones_like(t),))

        k0 = m.sqrt(2.0)
        k1 = m.sqrt(2.0)

        out0 = k0 * (u_ic - 1.0).expand(num_steps, 1)
        out1 = k1 * (u_t - 4.0 * m.pi * torch.cos(2.0 * m.pi * t))
        return torch.cat([out0, out1], dim=0)


model = PINN()

# dummy inputs: the residuals do not depend on them
x_train = torch.zeros((1, 1))
y_train = torch.zeros((1, 2 * num_steps, 1))
train_dataset = torch.utils.data.TensorDataset(x_train, y_train)
train_loader = torch.utils.data.DataLoader(train_dataset, batch_size=1)

module = tlm.training.LevenbergMarquardtModule(
    model=model,
    loss_fn=tlm.loss.MSELoss(),
    learning_rate=1.0,
    damping_start=1e-3,
    use_vmap=False,
)

tlm.utils.fit(module, train_loader, epochs=3)
