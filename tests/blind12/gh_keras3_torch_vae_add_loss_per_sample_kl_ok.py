# Source: https://github.com/keras-team/keras/issues/19560
"""The Keras 3 / PyTorch-backend VAE with fchollet's fix: add_loss() expects a scalar, so the
Sampling layer averages the KL term over the whole batch (no `axis=1`); the total loss the torch
trainer backwards is a scalar again. Keras 3 (Layer.add_loss, Model.compute_loss, the torch
train_step/fit, `ops`) is a small stand-in written on torch.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class ops:
    """Stand-in for keras.ops on the torch backend."""
    mean = staticmethod(lambda x, axis=None: x.mean() if axis is None else x.mean(dim=axis))
    square = staticmethod(torch.square)
    exp = staticmethod(torch.exp)
    shape = staticmethod(lambda x: tuple(x.shape))


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self._losses = []

    def add_loss(self, loss):
        self._losses.append(loss)

    def __call__(self, *args, **kwargs):
        return self.call(*args, **kwargs)


class Dense(Layer):
    def __init__(self, in_features, units, activation=None):
        super().__init__()
        self.kernel = nn.Linear(in_features, units)
        self.activation = activation

    def call(self, x):
        x = self.kernel(x)
        if self.activation == "relu":
            x = F.relu(x)
        elif self.activation == "sigmoid":
            x = torch.sigmoid(x)
        return x


class Sampling(Layer):
    """Uses (z_mean, z_log_var) to sample z, the vector encoding a digit; adds the KL loss."""

    def call(self, inputs):
        z_mean, z_log_var = inputs
        batch, dim = ops.shape(z_mean)
        epsilon = torch.randn(batch, dim)
        kl_loss = -0.5 * ops.mean(1 + z_log_var - ops.square(z_mean) - ops.exp(z_log_var))
        self.add_loss(kl_loss)
        return z_mean + ops.exp(0.5 * z_log_var) * epsilon


class Model(Layer):
    """Stand-in for keras.Model with the torch backend's TorchTrainer.fit/train_step."""

    @property
    def losses(self):
        collected = []
        for module in self.modules():
            if isinstance(module, Layer):
                collected.extend(module._losses)
        return collected

    def _clear_losses(self):
        for module in self.modules():
            if isinstance(module, Layer):
                module._losses = []

    def compile(self, optimizer, loss):
        self.optimizer = optimizer
        self._compile_loss = loss

    def compute_loss(self, x=None, y=None, y_pred=None):
        losses = []
        if self._compile_loss is not None:
            losses.append(self._compile_loss(y, y_pred))
        for loss in self.losses:
            losses.append(loss)
        total_loss = losses[0]
        for loss in losses[1:]:
            total_loss = total_loss + loss
        return total_loss

    def train_step(self, data):
        x, y = data
        self._clear_losses()
        y_pred = self(x, training=True)
        loss = self.compute_loss(x=x, y=y, y_pred=y_pred)
        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return {"loss": loss.mean().item()}

    def fit(self, x, y, epochs=1, batch_size=32):
        history = []
        for epoch in range(epochs):
            for start in range(0, x.shape[0], batch_size):
                logs = self.train_step((x[start:start + batch_size], y[start:start + batch_size]))
            history.append(logs)
        return history


latent_dim = 2
original_dim = 64


class VAE(Model):
    def __init__(self):
        super().__init__()
        self.enc_hidden = Dense(original_dim, 32, activation="relu")
        self.z_mean = Dense(32, latent_dim)
        self.z_log_var = Dense(32, latent_dim)
        self.sampling = Sampling()
        self.dec_hidden = Dense(latent_dim, 32, activation="relu")
        self.dec_out = Dense(32, original_dim, activation="sigmoid")

    def call(self, inputs, training=False):
        x = self.enc_hidden(inputs)
        z = self.sampling([self.z_mean(x), self.z_log_var(x)])
        return self.dec_out(self.dec_hidden(z))


def reconstruction_loss(y_true, y_pred):
    return F.binary_cross_entropy(y_pred, y_true, reduction="mean") * original_dim


x_train = torch.rand(64, original_dim).round()
vae = VAE()
vae.compile(optimizer=torch.optim.Adam(vae.parameters(), lr=1e-3), loss=reconstruction_loss)
vae.fit(x_train, x_train, epochs=2, batch_size=32)
