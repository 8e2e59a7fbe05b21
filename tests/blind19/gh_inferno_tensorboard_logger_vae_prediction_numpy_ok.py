# Source: https://github.com/inferno-pytorch/inferno/issues/195
"""inferno Trainer training a VAE, with a TensorboardLogger that logs images every
iteration (`log_images_every=(1, 'iteration')`).

After each training iteration the logger reads the trainer states (training inputs,
target and prediction) and, for image tensors, calls `extract_images_from_batch`, which
does `batch = batch.float().numpy()`. The prediction is the VAE's reconstruction, an
output of the model that still requires grad, so torch raises "Can't call numpy() on
Tensor that requires grad. Use tensor.detach().numpy() instead." inside the logger.

This is the fixed twin, with the reporter's patch of that line:
`batch = batch.float().detach().numpy()` (a logger must not need the graph).
inferno, tensorboardX and the data loader are replaced by small stand-ins that keep
inferno's Trainer / callback / logger structure.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


# ---- tensorboardX stand-in ----------------------------------------------------------
class SummaryWriter:
    def __init__(self, log_dir=None):
        self.images, self.scalars = [], []

    def add_scalar(self, tag, scalar_value, global_step):
        self.scalars.append((tag, float(scalar_value), global_step))

    def add_image(self, tag, img_tensor, global_step):
        self.images.append((tag, img_tensor.shape, global_step))


# ---- inferno/trainers/callbacks/logging/tensorboard.py (abridged) ---------------------
class TensorboardLogger:
    def __init__(self, log_scalars_every=None, log_images_every=None, log_directory=None):
        self.log_scalars_every = log_scalars_every
        self.log_images_every = log_images_every
        self.writer = SummaryWriter(log_directory)
        self.trainer = None
        self._config = {}
        self._trainer_states_being_observed_while_training = [
            'training_loss', 'training_inputs', 'training_target', 'training_prediction']

    def bind_trainer(self, trainer):
        self.trainer = trainer
        return self

    def end_of_training_iteration(self, **_):
        log_scalars_now = self.trainer.iteration_count % self.log_scalars_every[0] == 0
        log_images_now = self.trainer.iteration_count % self.log_images_every[0] == 0
        for state_key in self._trainer_states_being_observed_while_training:
            state = self.trainer.get_state(state_key, default=None)
            if state is None:
                continue
            self.log_object(state_key, state,
                            allow_scalar_logging=log_scalars_now,
                            allow_image_logging=log_images_now)

    def log_object(self, tag, object_, allow_scalar_logging=True, allow_image_logging=True):
        if isinstance(object_, (list, tuple)):
            for object_num, _object in enumerate(object_):
                self.log_object("{}_{}".format(tag, object_num), _object,
                                allow_scalar_logging, allow_image_logging)
            return
        if torch.is_tensor(object_) and object_.dim() == 0:
            if allow_scalar_logging:
                self.log_scalar(tag, object_.item(), self.trainer.iteration_count)
        elif torch.is_tensor(object_) and object_.dim() in (4, 5):
            if allow_image_logging:
                self.log_image_or_volume_batch(tag, object_)

    def extract_images_from_batch(self, batch, base_tag=None, prefix=None):
        # Convert to numpy
        batch = batch.float().detach().numpy()
        batch_indices = self._config.get('image_batch_indices', 'all')
        if batch_indices == 'all':
            batch_indices = list(range(batch.shape[0]))
        channel_indices = self._config.get('image_channel_indices', 'all')
        if channel_indices == 'all':
            channel_indices = list(range(batch.shape[1]))
        image_list = [image
                      for instance_num, instance in enumerate(batch)
                      for channel_num, image in enumerate(instance)
                      if instance_num in batch_indices and channel_num in channel_indices]
        return image_list

    def log_image_or_volume_batch(self, tag, batch, step=None):
        step = step or self.trainer.iteration_count
        image_list = self.extract_images_from_batch(batch, base_tag=tag)
        self.log_images(tag, image_list, step)

    def log_scalar(self, tag, value, step):
        self.writer.add_scalar(tag=tag, scalar_value=value, global_step=step)

    def log_images(self, tag, images, step, image_format='CHW'):
        for image_num, image in enumerate(images):
            if image.ndim == 2:
                image = image[..., None]
            if image.shape[-1] == 1:
                image = image[..., [0, 0, 0]]
            self.writer.add_image("{}/{}".format(tag, image_num), img_tensor=image,
                                  global_step=step)


# ---- inferno/trainers/basic.py (abridged) ----------------------------------------------
class Trainer:
    def __init__(self, model=None):
        self.model = model
        self.criterion = None
        self.optimizer = None
        self.logger = None
        self.iteration_count = 0
        self.epoch_count = 0
        self._max_num_epochs = 1
        self._state = {}

    def save_to_directory(self, folder):
        self._save_to_directory = folder
        return self

    def build_criterion(self, criterion):
        self.criterion = criterion
        return self

    def build_optimizer(self, name, **kwargs):
        self.optimizer = getattr(torch.optim, name)(self.model.parameters(), **kwargs)
        return self

    def save_every(self, frequency):
        return self

    def set_max_num_epochs(self, num_epochs):
        self._max_num_epochs = num_epochs
        return self

    def build_logger(self, logger, log_directory=None):
        self.logger = logger.bind_trainer(self)
        return self

    def bind_loader(self, name, loader):
        self._loaders = {name: loader}
        return self

    def update_state(self, key, value):
        self._state[key] = value

    def get_state(self, key, default=None):
        return self._state.get(key, default)

    def apply_model_and_loss(self, inputs, target):
        prediction = self.model(*inputs)
        loss = self.criterion(prediction, target)
        return prediction, loss

    def train_for(self):
        self.model.train()
        for batch in self._loaders['train']:
            inputs, target = batch[:-1], batch[-1]
            self.optimizer.zero_grad()
            prediction, loss = self.apply_model_and_loss(inputs, target)
            loss.backward()
            self.optimizer.step()
            self.update_state('training_inputs', inputs)
            self.update_state('training_target', target)
            self.update_state('training_prediction', prediction)
            self.update_state('training_loss', loss.detach())
            self.iteration_count += 1
            self.logger.end_of_training_iteration()

    def fit(self):
        while self.epoch_count < self._max_num_epochs:
            self.train_for()
            self.epoch_count += 1
        return self


# ---- the reporter's VAE ----------------------------------------------------------------
class VAE(nn.Module):
    def __init__(self, n_channels=1, side=8, z_dim=4):
        super().__init__()
        self.side = side
        d = n_channels * side * side
        self.enc = nn.Linear(d, 32)
        self.mu_head = nn.Linear(32, z_dim)
        self.logvar_head = nn.Linear(32, z_dim)
        self.dec1 = nn.Linear(z_dim, 32)
        self.dec2 = nn.Linear(32, d)
        self.mu = self.logvar = None

    def forward(self, x):
        h = F.relu(self.enc(x.flatten(1)))
        self.mu, self.logvar = self.mu_head(h), self.logvar_head(h)
        z = self.mu + torch.randn_like(self.mu) * torch.exp(0.5 * self.logvar)
        recon = torch.sigmoid(self.dec2(F.relu(self.dec1(z))))
        return recon.view_as(x)

    def loss_function(self):
        vae = self

        class VAELoss(nn.Module):
            def forward(self, recon, target):
                bce = F.binary_cross_entropy(recon, target, reduction='sum')
                kld = -0.5 * torch.sum(1 + vae.logvar - vae.mu.pow(2) - vae.logvar.exp())
                return (bce + kld) / target.shape[0]

        return VAELoss()


def main():
    torch.manual_seed(0)
    folder = "unused"
    vae = VAE()
    images = [torch.rand(4, 1, 8, 8) for _ in range(3)]
    train_loader = [(x, x) for x in images]
    # ...
    trainer = Trainer(vae)
    trainer.save_to_directory(folder)
    trainer.build_criterion(vae.loss_function())
    trainer.build_optimizer('Adam', lr=0.001)
    trainer.save_every((1, 'epochs'))
    trainer.set_max_num_epochs(2)
    trainer.build_logger(TensorboardLogger(log_scalars_every=(1, 'iteration'),
                                           log_images_every=(1, 'iteration'),
                                           log_directory=folder))
    # ...
    trainer.bind_loader('train', train_loader)
    trainer.fit()
    print(len(trainer.logger.writer.images), "images logged")


if __name__ == '__main__':
    main()
