# Source: https://github.com/rezaakb/pinns-torch/issues/12
"""pinns-torch's Navier-Stokes example run from a notebook, as the reporter did: the output
function derives the velocities from the stream function with torch.autograd.grad, and the
training steps work, but validation fails with "element 0 of tensors does not require grad and
does not have a grad_fn": the notebook built lightning.Trainer without inference_mode=False, so
validation runs under torch.inference_mode(), where the model's enable_grad() cannot record a
graph. PINNModule, the FCN, the gradient helper and the PDE follow the library in small; the
Lightning Trainer is a stand-in running validation under inference_mode (its default) or no_grad.
Fix (the reporter's, as the Hydra config does): Trainer(inference_mode=False)."""
import torch
import torch.nn as nn


def gradient(dy, dx, ones_like_tensor=None, create_graph=True):
    if ones_like_tensor is None:
        ones_like_tensor = [torch.ones_like(dy)]
    return torch.autograd.grad(dy, dx, grad_outputs=ones_like_tensor,  # expect: GG104
                               create_graph=create_graph, allow_unused=True)


class FCN(nn.Module):
    def __init__(self, layers, output_names):
        super().__init__()
        modules = []
        for i in range(len(layers) - 2):
            modules += [nn.Linear(layers[i], layers[i + 1]), nn.Tanh()]
        modules.append(nn.Linear(layers[-2], layers[-1]))
        self.model = nn.Sequential(*modules)
        self.output_names = output_names

    def forward(self, spatial, time):
        z = self.model(torch.cat([*spatial, time], 1))
        return {name: z[:, i:i + 1] for i, name in enumerate(self.output_names)}


def output_fn(outputs, x, y, t):
    psi = outputs["psi"]
    psi_y, psi_x = gradient(psi, [y, x])
    outputs["u"] = psi_y
    outputs["v"] = -psi_x
    return outputs


def pde_fn(outputs, x, y, t, extra_variables):
    u, v, p = outputs["u"], outputs["v"], outputs["p"]
    u_t, u_x, u_y = gradient(u, [t, x, y])
    v_t, v_x, v_y = gradient(v, [t, x, y])
    p_x, p_y = gradient(p, [x, y])
    outputs["f_u"] = u_t + extra_variables["l1"] * (u * u_x + v * u_y) + p_x
    outputs["f_v"] = v_t + extra_variables["l1"] * (u * v_x + v * v_y) + p_y
    return outputs


class PINNModule(nn.Module):
    def __init__(self, net, pde_fn, output_fn):
        super().__init__()
        self.net = net
        self.pde_fn = pde_fn
        self.output_fn = output_fn
        self.extra_variables = nn.ParameterDict({"l1": nn.Parameter(torch.tensor(0.0))})
        self.criterion = nn.MSELoss()

    def model_step(self, batch):
        x, y, t, u_true, v_true = batch
        with torch.enable_grad():
            x, y, t = x.requires_grad_(), y.requires_grad_(), t.requires_grad_()
            outputs = self.net([x, y], t)
            outputs = self.output_fn(outputs, x, y, t)
            outputs = self.pde_fn(outputs, x, y, t, self.extra_variables)
        loss = self.criterion(outputs["u"], u_true) + self.criterion(outputs["v"], v_true)
        loss = loss + outputs["f_u"].pow(2).mean() + outputs["f_v"].pow(2).mean()
        return loss, outputs

    def training_step(self, batch):
        loss, _ = self.model_step(batch)
        return loss

    def validation_step(self, batch):
        loss, outputs = self.model_step(batch)
        return loss.item()

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)


class Trainer:
    """Stand-in for lightning.Trainer's fit loop: train steps, then a validation pass."""

    def __init__(self, max_epochs=1, inference_mode=True):
        self.max_epochs = max_epochs
        self.inference_mode = inference_mode

    def fit(self, model, train_batches, val_batches):
        optimizer = model.configure_optimizers()
        for epoch in range(self.max_epochs):
            for batch in train_batches:
                loss = model.training_step(batch)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            eval_context = torch.inference_mode() if self.inference_mode else torch.no_grad()
            with eval_context:
                for batch in val_batches:
                    model.validation_step(batch)


def make_batches(n_batches=2, n=16):
    return [tuple(torch.rand(n, 1) for _ in range(5)) for _ in range(n_batches)]


if __name__ == "__main__":
    net = FCN(layers=[3, 16, 16, 2], output_names=["psi", "p"])
    model = PINNModule(net=net, pde_fn=pde_fn, output_fn=output_fn)
    trainer = Trainer(max_epochs=1)
    trainer.fit(model, make_batches(), make_batches(1))
