# Source: https://github.com/li-lab-mcgill/singlecell-deepfeature/issues/2
"""singlecell-deepfeature (li-lab-mcgill), scripts/utils_helper.py: `GANTrainer.train` trains a
scVI-style VAE adversarially against a batch discriminator. Per mini-batch it

1. runs the VAE, `loss.backward(retain_graph=True)`, `optimizer.step()` (Adam over all VAE
   parameters, the z encoder included);
2. for 10 discriminator iterations: `batch_pred = self.disc(z)` on the *same* `z`,
   `D_loss.backward(retain_graph=True)`, `optimizerD.step()`;
3. `E_loss = -1 * D_loss`, `E_loss.backward(retain_graph=True)`, `optimizerE.step()`.

`z` still carries the encoder's graph, and step 1's `optimizer.step()` has already changed the
encoder's Linear weights in place, so the first `D_loss.backward(retain_graph=True)` raises "one
of the variables needed for gradient computation has been modified by an inplace operation:
[torch.FloatTensor [64, 10]], which is output 0 of TBackward0, is at version 2; expected version 1"
(the reporter's traceback, torch 1.7; the repository was written for torch < 1.5).

The thread has no answer. Fix (in the _ok twin): train the discriminator on `z.detach()` (it
only needs the codes), and for the encoder's adversarial step draw a fresh `z` from the updated
encoder and backward `-NLL(disc(z))` once; no graph needs `retain_graph=True` any more.

Stand-ins: random counts instead of the pancreas datasets, a plain Dataset instead of the pandas
one, no scvi import (one_hot and the negative binomial log-likelihood are re-written), tqdm
dropped; VAE, Encoder, Decoder, FCLayers, Discriminator and GANTrainer keep the repository's
structure.
"""
import collections

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Normal, kl_divergence as kl
from torch.utils.data import Dataset


def one_hot(index, n_cat):
    onehot = torch.zeros(index.size(0), n_cat, device=index.device)
    onehot.scatter_(1, index.type(torch.long), 1)
    return onehot.type(torch.float32)


def log_nb_positive(x, mu, theta, eps=1e-8):
    log_theta_mu_eps = torch.log(theta + mu + eps)
    res = (theta * (torch.log(theta + eps) - log_theta_mu_eps)
           + x * (torch.log(mu + eps) - log_theta_mu_eps)
           + torch.lgamma(x + theta) - torch.lgamma(theta) - torch.lgamma(x + 1))
    return torch.sum(res, dim=-1)


class GeneDataset(Dataset):
    def __init__(self, X, labels, batch, batch_cont):
        self.X = X
        self.label = labels
        self.batch = batch
        self.batch_cont = batch_cont
        self.nb_genes = X.shape[1]
        self.n_batches = len(batch.unique())
        self.n_labels = len(labels.unique())

    def __len__(self):
        return self.X.shape[0]

    def __getitem__(self, index):
        return self.X[index], self.label[index], self.batch[index], self.batch_cont[index]


def reparameterize_gaussian(mu, var):
    return Normal(mu, var.sqrt()).rsample()


class FCLayers(nn.Module):
    def __init__(self, n_in, n_out, n_cat_list=None, n_layers=1, n_hidden=128, dropout_rate=0.1,
                 use_batch_norm=True):
        super().__init__()
        layers_dim = [n_in] + (n_layers - 1) * [n_hidden] + [n_out]
        if n_cat_list is not None:
            self.n_cat_list = [n_cat if n_cat > 1 else 0 for n_cat in n_cat_list]
        else:
            self.n_cat_list = []
        self.fc_layers = nn.Sequential(collections.OrderedDict([
            ("Layer {}".format(i), nn.Sequential(
                nn.Linear(n_in + sum(self.n_cat_list), n_out),
                nn.BatchNorm1d(n_out, momentum=0.01, eps=0.001) if use_batch_norm else None,
                nn.ReLU(),
                nn.Dropout(p=dropout_rate) if dropout_rate > 0 else None))
            for i, (n_in, n_out) in enumerate(zip(layers_dim[:-1], layers_dim[1:]))]))

    def forward(self, x, *cat_list, instance_id=0):
        one_hot_cat_list = []
        for n_cat, cat in zip(self.n_cat_list, cat_list):
            if n_cat > 1:
                if cat.size(1) != n_cat:
                    one_hot_cat = one_hot(cat, n_cat)
                else:
                    one_hot_cat = cat
                one_hot_cat_list += [one_hot_cat]
        for layers in self.fc_layers:
            for layer in layers:
                if layer is not None:
                    if isinstance(layer, nn.Linear):
                        x = torch.cat((x, *one_hot_cat_list), dim=-1)
                    x = layer(x)
        return x


class Encoder(nn.Module):
    def __init__(self, n_input, n_output, n_cat_list=None, n_layers=1, n_hidden=128, dropout_rate=0.1):
        super().__init__()
        self.encoder = FCLayers(n_in=n_input, n_out=n_hidden, n_cat_list=n_cat_list,
                                n_layers=n_layers, n_hidden=n_hidden, dropout_rate=dropout_rate)
        self.mean_encoder = nn.Linear(n_hidden, n_output)
        self.var_encoder = nn.Linear(n_hidden, n_output)

    def forward(self, x, *cat_list):
        q = self.encoder(x, *cat_list)
        q_m = self.mean_encoder(q)
        q_v = torch.exp(self.var_encoder(q)) + 1e-4
        latent = reparameterize_gaussian(q_m, q_v)
        return q_m, q_v, latent


class Decoder(nn.Module):
    def __init__(self, n_input, n_output, n_cat_list=None, n_layers=1, n_hidden=128):
        super().__init__()
        self.px_decoder = FCLayers(n_in=n_input, n_out=n_hidden, n_cat_list=n_cat_list,
                                   n_layers=n_layers, n_hidden=n_hidden, dropout_rate=0)
        self.px_scale_decoder = nn.Sequential(nn.Linear(n_hidden, n_output))
        self.px_r_decoder = nn.Linear(n_hidden, n_output)

    def forward(self, dispersion, z, *cat_list):
        px = self.px_decoder(z, *cat_list)
        px_scale = self.px_scale_decoder(px)
        px_rate = px_scale
        px_r = self.px_r_decoder(px) if dispersion == "gene-cell" else None
        return px_r, px_rate


class VAE(nn.Module):
    def __init__(self, n_input, n_batch=0, n_labels=0, n_hidden=128, n_latent=10, n_layers=1,
                 dropout_rate=0.1, dispersion="gene", log_variational=True,
                 reconstruction_loss="nb", kl_weight=0.1):
        super().__init__()
        self.dispersion = dispersion
        self.n_latent = n_latent
        self.log_variational = log_variational
        self.reconstruction_loss = reconstruction_loss
        self.n_batch = n_batch
        self.n_labels = n_labels
        self.kl_weight = kl_weight
        self.px_r = torch.nn.Parameter(torch.randn(n_input))
        self.z_encoder = Encoder(n_input, n_latent, n_layers=n_layers, n_hidden=n_hidden,
                                 dropout_rate=dropout_rate)
        self.decoder = Decoder(n_latent, n_input, n_cat_list=[n_batch], n_layers=n_layers,
                               n_hidden=n_hidden)

    def sample_from_posterior_z(self, x, y=None, give_mean=False):
        if self.log_variational:
            x = torch.log(1 + x)
        qz_m, qz_v, z = self.z_encoder(x, y)
        if give_mean:
            z = qz_m
        return z

    def get_reconstruction_loss(self, x, px_rate, px_r):
        return -log_nb_positive(x, px_rate, px_r)

    def inference(self, x, batch_index=None, y=None, n_samples=1):
        x_ = x
        if self.log_variational:
            x_ = torch.log(1 + x_)
        qz_m, qz_v, z = self.z_encoder(x_, y)
        px_r, px_rate = self.decoder(self.dispersion, z, batch_index, y)
        px_r = self.px_r
        px_rate = torch.exp(px_rate)
        px_r = torch.exp(px_r)
        return dict(px_r=px_r, px_rate=px_rate, qz_m=qz_m, qz_v=qz_v, z=z)

    def forward(self, x, batch_index=None, y=None):
        outputs = self.inference(x, batch_index, y)
        qz_m = outputs["qz_m"]
        qz_v = outputs["qz_v"]
        px_rate = outputs["px_rate"]
        px_r = outputs["px_r"]
        z = outputs['z']
        mean = torch.zeros_like(qz_m)
        scale = torch.ones_like(qz_v)
        kl_divergence_z = kl(Normal(qz_m, torch.sqrt(qz_v)), Normal(mean, scale)).sum(dim=1)
        kl_divergence = kl_divergence_z
        reconst_loss = self.get_reconstruction_loss(x, px_rate, px_r)
        return reconst_loss, kl_divergence, z


class Discriminator(nn.Module):
    def __init__(self, in_features, layers, n_class):
        super(Discriminator, self).__init__()
        modules = []
        last_layer_size = in_features
        for l in layers:
            modules.append(nn.Linear(last_layer_size, l))
            modules.append(nn.ReLU())
            last_layer_size = l
        modules.append(nn.Linear(last_layer_size, n_class))
        modules.append(nn.LogSoftmax(dim=1))
        self.main = nn.Sequential(*modules)

    def forward(self, input):
        return self.main(input)


class GANTrainer():
    def __init__(self, batch_type, model, disc, dataset, device, batch_size=128):
        self.batch_type = batch_type
        self.model = model
        self.disc = disc
        self.dataset = dataset
        self.device = device
        self.dataset_loader = torch.utils.data.DataLoader(dataset, batch_size=batch_size)

    def train(self, n_epochs=20, lr=1e-3, eps=0.01, params=None, enc_lr=1e-3, disc_lr=1e-3):
        self.model.train()
        self.disc.train()

        if params is None:
            params = filter(lambda p: p.requires_grad, self.model.parameters())

        optimizer = self.optimizer = torch.optim.Adam(params, lr=lr, eps=eps)
        optimizerE = self.optimizerE = torch.optim.Adam(self.model.z_encoder.parameters(), lr=enc_lr)
        optimizerD = self.optimizerD = torch.optim.Adam(self.disc.parameters(), lr=disc_lr)

        self.n_epochs = n_epochs

        nll_loss = nn.NLLLoss(reduction='none')
        mse_loss = nn.MSELoss()

        vae_loss_list, E_loss_list, D_loss_list = [], [], []
        for self.epoch in range(n_epochs):
            vae_loss_list_epoch, E_loss_list_epoch, D_loss_list_epoch = [], [], []

            for sample_batch, _, batch_dis, batch_cont in self.dataset_loader:

                batch_dis = batch_dis.reshape((-1, 1))
                sample_batch = sample_batch.to(self.device)
                batch_dis = batch_dis.to(self.device)
                batch_cont = batch_cont.to(self.device)
                ############################
                # (1) Update VAE network
                ###########################
                self.model.zero_grad()
                reconst_loss, kl_divergence, z = self.model(sample_batch, batch_dis)
                loss = torch.mean(reconst_loss + self.model.kl_weight * kl_divergence)
                vae_loss_list_epoch.append(loss.item())
                loss.backward()
                optimizer.step()
                ############################
                # (1) Update D Net
                ###########################
                z_d = z.detach()
                for disc_iter in range(10):
                    self.disc.zero_grad()
                    batch_pred = self.disc(z_d)
                    if self.batch_type == 'continuous':
                        D_loss = mse_loss(batch_pred.squeeze(), batch_cont)
                    elif self.batch_type == 'discrete':
                        D_loss = nll_loss(batch_pred, batch_dis.view(-1))
                        D_loss = torch.mean(D_loss)

                    D_loss_list_epoch.append(D_loss.item())
                    D_loss.backward()
                    optimizerD.step()
                ############################
                # (1) Update E Net
                ###########################
                self.model.z_encoder.zero_grad()
                z = self.model.sample_from_posterior_z(sample_batch)
                batch_pred = self.disc(z)
                if self.batch_type == 'continuous':
                    D_loss = mse_loss(batch_pred.squeeze(), batch_cont)
                elif self.batch_type == 'discrete':
                    D_loss = torch.mean(nll_loss(batch_pred, batch_dis.view(-1)))
                E_loss = -1 * D_loss
                E_loss_list_epoch.append(E_loss.item())
                E_loss.backward()
                optimizerE.step()

            vae_loss_list.append(sum(vae_loss_list_epoch) / len(vae_loss_list_epoch))
            D_loss_list.append(sum(D_loss_list_epoch) / len(D_loss_list_epoch))
            E_loss_list.append(sum(E_loss_list_epoch) / len(E_loss_list_epoch))

        self.model.eval()
        self.disc.eval()
        return vae_loss_list, D_loss_list, E_loss_list


if __name__ == "__main__":
    torch.manual_seed(0)
    n_cells, n_genes, n_batches = 64, 30, 2
    X = torch.poisson(torch.rand(n_cells, n_genes) * 5)
    labels = torch.randint(0, 3, (n_cells,))
    batch = torch.randint(0, n_batches, (n_cells,))
    batch_cont = torch.rand(n_cells)
    gene_dataset = GeneDataset(X, labels, batch, batch_cont)

    vae = VAE(gene_dataset.nb_genes, n_batch=gene_dataset.n_batches, n_hidden=32, n_latent=10)
    disc = Discriminator(10, [16, 16], gene_dataset.n_batches)
    trainer = GANTrainer('discrete', vae, disc, gene_dataset, 'cpu', batch_size=32)
    history = trainer.train(n_epochs=2, lr=1e-3, eps=0.01, disc_lr=1e-3, enc_lr=1e-3)
    print(history)
