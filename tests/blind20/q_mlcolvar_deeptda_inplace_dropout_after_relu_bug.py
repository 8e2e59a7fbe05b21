# Source: https://github.com/luigibonati/mlcolvar/issues/118
"""mlcolvar (luigibonati/mlcolvar) before commit 605ce89 ("Made dropout not in_place"): the
`FeedForward` block behind every CV stacks `Linear -> get_activation(activ) -> Dropout` and built
the dropout as `torch.nn.Dropout(p=drop, inplace=True)`, while `get_activation("relu")` returns
`torch.nn.ReLU(True)`. The reporter trains a Deep-TDA CV with
`options={'nn': {'dropout': [0.2, 0.4, 0.6]}}`; the in-place dropout overwrites the ReLU output
that ReLU saved for its backward, and the training step's backward (Lightning calls it on the loss
`training_step` returns) raises "one of the variables needed for gradient computation has been
modified by an inplace operation: [...], which is output 0 of ReluBackward0, is at version 2;
expected version 1".

Fix (in the _ok twin, as in the commit): `torch.nn.Dropout(p=drop)`, not in place.

Stand-ins: a minimal Lightning `Trainer.fit` loop (zero_grad, `training_step`, backward on its
returned loss, step), a plain Normalization, random two-state data; FeedForward,
`get_activation`, `parse_nn_options`, `tda_loss` and DeepTDA keep the library's code.
"""
from typing import Optional, Union

import torch


# ---- mlcolvar/core/nn/utils.py ----
def get_activation(activation: str):
    """Return activation module given string."""
    activ = None
    if activation == "relu":
        activ = torch.nn.ReLU(True)
    elif activation == "elu":
        activ = torch.nn.ELU(True)
    elif activation == "tanh":
        activ = torch.nn.Tanh()
    elif activation == "softplus":
        activ = torch.nn.Softplus()
    elif activation == "linear":
        print("WARNING: no activation selected")
    elif activation is None:
        pass
    else:
        raise ValueError(f"Unknown activation: {activation}.")
    return activ


def parse_nn_options(options: str, n_layers: int, last_layer_activation: bool):
    if hasattr(options, "__iter__") and not isinstance(options, str):
        if len(options) != n_layers:
            raise ValueError(f"Length of options: {options} ({len(options)} should be equal to number of layers ({n_layers})).")
        options_list = options
    else:
        if last_layer_activation:
            options_list = [options for _ in range(n_layers)]
        else:
            options_list = [options for _ in range(n_layers - 1)]
            options_list.append(None)
    return options_list


# ---- mlcolvar/core/nn/feedforward.py ----
class FeedForward(torch.nn.Module):
    def __init__(self, layers: list, activation: Union[str, list] = "relu",
                 dropout: Optional[Union[float, list]] = None, batchnorm: Union[bool, list] = False,
                 last_layer_activation: bool = False, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(layers[0], int):
            raise TypeError("layers should be a list-type of integers.")
        n_layers = len(layers) - 1
        activation_list = parse_nn_options(activation, n_layers, last_layer_activation)
        dropout_list = parse_nn_options(dropout, n_layers, last_layer_activation)
        batchnorm_list = parse_nn_options(batchnorm, n_layers, last_layer_activation)

        modules = []
        for i in range(len(layers) - 1):
            modules.append(torch.nn.Linear(layers[i], layers[i + 1]))
            activ, drop, norm = activation_list[i], dropout_list[i], batchnorm_list[i]

            if activ is not None:
                modules.append(get_activation(activ))

            if drop is not None:
                modules.append(torch.nn.Dropout(p=drop, inplace=True))

            if norm:
                modules.append(torch.nn.BatchNorm1d(layers[i + 1]))

        self.nn = torch.nn.Sequential(*modules)
        self.in_features = layers[0]
        self.out_features = layers[-1]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.nn(x)


# ---- mlcolvar/core/loss/tda_loss.py ----
def tda_loss(H, labels, n_states, target_centers, target_sigmas, alpha=1, beta=100, return_loss_terms=False):
    if not isinstance(target_centers, torch.Tensor):
        target_centers = torch.Tensor(target_centers)
    if not isinstance(target_sigmas, torch.Tensor):
        target_sigmas = torch.Tensor(target_sigmas)
    device = H.device
    target_centers = target_centers.to(device)
    target_sigmas = target_sigmas.to(device)
    loss_centers = torch.zeros_like(target_centers, device=device)
    loss_sigmas = torch.zeros_like(target_sigmas, device=device)
    for i in range(n_states):
        if not (labels == i).any():
            raise ValueError(f"State {i} was not represented in this batch!")
        else:
            H_red = H[torch.nonzero(labels == i, as_tuple=True)]
            mu = torch.mean(H_red, 0)
            sigma = torch.std(H_red, 0)
        loss_centers[i] = alpha * (mu - target_centers[i]).pow(2)
        loss_sigmas[i] = beta * (sigma - target_sigmas[i]).pow(2)
    loss_centers = torch.sum(loss_centers)
    loss_sigmas = torch.sum(loss_sigmas)
    loss = loss_centers + loss_sigmas
    if return_loss_terms:
        return loss, loss_centers, loss_sigmas
    return loss


class TDALoss(torch.nn.Module):
    def __init__(self, n_states, target_centers, target_sigmas, alpha=1.0, beta=100.0):
        super().__init__()
        self.n_states = n_states
        self.target_centers = target_centers
        self.target_sigmas = target_sigmas
        self.alpha = alpha
        self.beta = beta

    def forward(self, H, labels, return_loss_terms=False):
        return tda_loss(H, labels, self.n_states, self.target_centers, self.target_sigmas,
                        self.alpha, self.beta, return_loss_terms)


# ---- mlcolvar/cvs/supervised/deeptda.py (BaseCV + LightningModule reduced) ----
class Normalization(torch.nn.Module):
    def __init__(self, in_features, mean=None, range=None):
        super().__init__()
        self.register_buffer("mean", torch.zeros(in_features) if mean is None else mean)
        self.register_buffer("range", torch.ones(in_features) if range is None else range)

    def forward(self, x):
        return (x - self.mean) / self.range


class DeepTDA(torch.nn.Module):
    BLOCKS = ["norm_in", "nn"]

    def __init__(self, n_states, n_cvs, target_centers, target_sigmas, layers, options=None, **kwargs):
        super().__init__()
        self.in_features, self.out_features = layers[0], layers[-1]
        self.loss_fn = TDALoss(n_states=n_states, target_centers=target_centers, target_sigmas=target_sigmas)
        options = {} if options is None else options
        for b in self.BLOCKS:
            options.setdefault(b, {})
        self.n_states = n_states
        if self.out_features != n_cvs:
            raise ValueError("Number of neurons of last layer should match the number of CVs!")
        o = "norm_in"
        if (options[o] is not False) and (options[o] is not None):
            self.norm_in = Normalization(self.in_features, **options[o])
        o = "nn"
        self.nn = FeedForward(layers, **options[o])
        self.logged = {}

    def forward_cv(self, x):
        return self.nn(self.norm_in(x))

    def log(self, name, value, on_epoch=True):
        self.logged[name] = float(value)

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-3)

    def training_step(self, train_batch, batch_idx):
        x = train_batch["data"]
        labels = train_batch["labels"]
        z = self.forward_cv(x)
        loss, loss_centers, loss_sigmas = self.loss_fn(z, labels, return_loss_terms=True)
        name = "train" if self.training else "valid"
        self.log(f"{name}_loss", loss, on_epoch=True)
        self.log(f"{name}_loss_centers", loss_centers, on_epoch=True)
        self.log(f"{name}_loss_sigmas", loss_sigmas, on_epoch=True)
        return loss


class Trainer:
    """Minimal stand-in for lightning.Trainer: automatic optimization."""
    def __init__(self, max_epochs=2):
        self.max_epochs = max_epochs

    def fit(self, model, batches):
        opt = model.configure_optimizers()
        model.train()
        for epoch in range(self.max_epochs):
            for batch_idx, batch in enumerate(batches):
                opt.zero_grad()
                loss = model.training_step(batch, batch_idx)
                loss.backward()  # expect: GG103
                opt.step()


if __name__ == "__main__":
    torch.manual_seed(0)
    n_states = 2
    target_centers = [-7, 7]
    target_sigmas = [0.2, 0.2]
    nn_layers = [45, 24, 12, 1]
    X = torch.cat([torch.randn(64, 45) - 1, torch.randn(64, 45) + 1])
    y = torch.cat([torch.zeros(64), torch.ones(64)])
    perm = torch.randperm(128)
    batches = [{"data": X[perm[i:i + 32]], "labels": y[perm[i:i + 32]]} for i in range(0, 128, 32)]

    model = DeepTDA(n_states=n_states, n_cvs=1, target_centers=target_centers, target_sigmas=target_sigmas,
                    layers=nn_layers, options={'nn': {'dropout': [0.2, 0.4, 0.6]}})
    trainer = Trainer(max_epochs=2)
    trainer.fit(model, batches)
    print(model.logged)
