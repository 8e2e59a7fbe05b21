# Source: https://github.com/ypxie/HDGan/issues/15
"""HDGan (text-to-image hierarchically-nested GAN) training loop, HDGan/HDGan.py `train_gans`.

Inside the discriminator update the loop plots each scale's image loss with
`d_plot_dict[key].plot(to_numpy(img_loss).mean())`.  The project helper `to_numpy` was written
for torch 0.3: it unwraps `src.data` only when `type(src) == Variable`.  Since torch 0.4 every
tensor is a `torch.Tensor` (never of type `Variable`), so `img_loss` (which requires grad) goes
straight to `x.cpu().numpy()`, raising "Can't call numpy() on Tensor that requires grad".
(`.cuda()` calls are dropped, the visdom plotter is a stand-in that records the values, and the
noise placeholder `z` is created with `requires_grad=False`: in the original it is a grad-requiring
leaf whose `.grad` piles up unused while `z.data.normal_()` redraws it, which is beside the point.)

Fix: make `to_numpy` detach tensors (`src.detach().cpu().numpy()`), which is what the error
message asks for (the right fix; the stored thread shows no code change).
"""
import functools
import warnings

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim
from torch.autograd import Variable

warnings.filterwarnings("ignore", message="volatile was removed")
torch.manual_seed(0)
np.random.seed(0)


# ---------------- HDGan/proj_utils/torch_utils.py ----------------
def set_lr(optimizer, lr):
    for param_group in optimizer.param_groups:
        param_group['lr'] = lr
    return optimizer


def to_variable(x, requires_grad=True, var=True, volatile=False):
    if type(x) is Variable:
        return x
    if type(x) is np.ndarray:
        x = torch.from_numpy(x.astype(np.float32))
    if var:
        x = Variable(x, requires_grad=requires_grad, volatile=volatile)
    x.volatile = volatile
    return x


def to_device(src, var=True, volatile=False, requires_grad=True):
    requires_grad = requires_grad and (not volatile)
    src = to_variable(src, var=var, volatile=volatile, requires_grad=requires_grad)
    return src


def to_numpy(src):
    if type(src) == np.ndarray:
        return src
    elif type(src) == Variable:
        x = src.data
    else:
        x = src
    return x.cpu().numpy()  # expect: GG107


class plot_scalar(object):
    """Stand-in for the visdom scalar plotter: keeps the values."""

    def __init__(self, name='default', env='main', rate=1):
        self.name, self.env, self.rate, self.values = name, env, rate, []

    def plot(self, y):
        self.values.append(float(y))


# ---------------- models (tiny multi-scale generator / discriminator) ----------------
class Generator(nn.Module):
    def __init__(self, emb_dim=8, noise_dim=4):
        super().__init__()
        self.ca = nn.Linear(emb_dim, 2 * 6)
        self.fc = nn.Linear(6 + noise_dim, 8 * 4 * 4)
        self.up64 = nn.Sequential(nn.Upsample(scale_factor=2), nn.Conv2d(8, 8, 3, 1, 1), nn.ReLU())
        self.up128 = nn.Sequential(nn.Upsample(scale_factor=2), nn.Conv2d(8, 8, 3, 1, 1), nn.ReLU())
        self.up256 = nn.Sequential(nn.Upsample(scale_factor=2), nn.Conv2d(8, 8, 3, 1, 1), nn.ReLU())
        self.to_img = nn.ModuleList([nn.Conv2d(8, 3, 3, 1, 1) for _ in range(3)])

    def forward(self, sent_embeddings, z):
        mean, logvar = self.ca(sent_embeddings).chunk(2, dim=1)
        c = mean + torch.randn_like(mean) * logvar.mul(0.5).exp()
        x = self.fc(torch.cat([c, z], 1)).view(-1, 8, 4, 4)
        x64 = self.up64(x)
        x128 = self.up128(x64)
        x256 = self.up256(x128)
        out = [torch.tanh(t(h)) for t, h in zip(self.to_img, (x64, x128, x256))]
        return out[0], out[1], out[2], mean, logvar


class Discriminator(nn.Module):
    def __init__(self, emb_dim=8):
        super().__init__()
        self.img = nn.Sequential(nn.Conv2d(3, 8, 3, 1, 1), nn.LeakyReLU(0.2), nn.AdaptiveAvgPool2d(5))
        self.local = nn.Conv2d(8, 1, 1)
        self.pair = nn.Linear(8 * 25 + emb_dim, 1)

    def forward(self, images, embeddings):
        h = self.img(images)
        local = torch.sigmoid(self.local(h))
        pair = torch.sigmoid(self.pair(torch.cat([h.flatten(1), embeddings], 1)))
        return pair, local


# ---------------- HDGan/HDGan.py ----------------
def to_img_dict_(*inputs, super512=False):
    if type(inputs[0]) == tuple:
        inputs = inputs[0]
    res = {}
    res['output_64'] = inputs[0]
    res['output_128'] = inputs[1]
    res['output_256'] = inputs[2]
    mean_var = (inputs[3], inputs[4])
    return res, mean_var


def get_KL_Loss(mu, logvar):
    kld = mu.pow(2).add(logvar.mul(2).exp()).add(-1).mul(0.5).add(logvar.mul(-1))
    return torch.mean(kld)


def compute_d_pair_loss(real_logit, wrong_logit, fake_logit, real_labels, fake_labels):
    criterion = nn.MSELoss()
    real_d_loss = criterion(real_logit, real_labels)
    wrong_d_loss = criterion(wrong_logit, fake_labels)
    fake_d_loss = criterion(fake_logit, fake_labels)
    return real_d_loss + (wrong_d_loss + fake_d_loss) / 2.


def compute_d_img_loss(wrong_img_logit, real_img_logit, fake_img_logit, real_labels, fake_labels):
    criterion = nn.MSELoss()
    wrong_d_loss = criterion(wrong_img_logit, real_labels)
    real_d_loss = criterion(real_img_logit, real_labels)
    fake_d_loss = criterion(fake_img_logit, fake_labels)
    return fake_d_loss + (wrong_d_loss + real_d_loss) / 2


def compute_g_loss(fake_logit, real_labels):
    return nn.MSELoss()(fake_logit, real_labels)


def train_gans(dataset, model_name, netG, netD, args):
    d_lr, g_lr, tot_epoch = args.d_lr, args.g_lr, args.maxepoch
    train_sampler = iter(dataset[0])
    updates_per_epoch = args.updates_per_epoch

    optimizerD = optim.Adam(netD.parameters(), lr=d_lr, betas=(0.5, 0.999))
    optimizerG = optim.Adam(netG.parameters(), lr=g_lr, betas=(0.5, 0.999))
    start_epoch = 1

    d_loss_plot = plot_scalar(name="d_loss", env=model_name, rate=args.display_freq)
    g_loss_plot = plot_scalar(name="g_loss", env=model_name, rate=args.display_freq)
    kl_loss_plot = plot_scalar(name="kl_loss", env=model_name, rate=args.display_freq)
    all_keys = ["output_64", "output_128", "output_256"]
    g_plot_dict, d_plot_dict = {}, {}
    for this_key in all_keys:
        g_plot_dict[this_key] = plot_scalar(name="g_img_loss_" + this_key, env=model_name, rate=args.display_freq)
        d_plot_dict[this_key] = plot_scalar(name="d_img_loss_" + this_key, env=model_name, rate=args.display_freq)

    z = torch.FloatTensor(args.batch_size, args.noise_dim).normal_(0, 1)
    z = to_device(z, requires_grad=False)

    REAL_global_LABELS = Variable(torch.FloatTensor(args.batch_size, 1).fill_(1))
    FAKE_global_LABELS = Variable(torch.FloatTensor(args.batch_size, 1).fill_(0))
    REAL_local_LABELS = Variable(torch.FloatTensor(args.batch_size, 1, 5, 5).fill_(1))
    FAKE_local_LABELS = Variable(torch.FloatTensor(args.batch_size, 1, 5, 5).fill_(0))

    def get_labels(logit):
        if logit.size(-1) == 1:
            return REAL_global_LABELS.view_as(logit), FAKE_global_LABELS.view_as(logit)
        else:
            return REAL_local_LABELS.view_as(logit), FAKE_local_LABELS.view_as(logit)

    to_img_dict = functools.partial(to_img_dict_, super512=False)

    for epoch in range(start_epoch, tot_epoch):
        if epoch % args.epoch_decay == 0:
            d_lr, g_lr = d_lr / 2, g_lr / 2
            set_lr(optimizerD, d_lr)
            set_lr(optimizerG, g_lr)
        train_sampler = iter(dataset[0])
        netG.train()
        netD.train()
        for it in range(updates_per_epoch):
            for _ in range(args.ncritic):
                images, wrong_images, np_embeddings, _, _ = next(train_sampler)
                embeddings = to_device(np_embeddings, requires_grad=False)
                z.data.normal_(0, 1)

                ''' update D '''
                for p in netD.parameters():
                    p.requires_grad = True
                netD.zero_grad()
                fake_images, mean_var = to_img_dict(netG(embeddings, z))

                discriminator_loss = 0
                for key, _ in fake_images.items():
                    this_img = to_device(images[key])
                    this_wrong = to_device(wrong_images[key])
                    this_fake = Variable(fake_images[key].data)

                    real_logit, real_img_logit_local = netD(this_img, embeddings)
                    wrong_logit, wrong_img_logit_local = netD(this_wrong, embeddings)
                    fake_logit, fake_img_logit_local = netD(this_fake, embeddings)

                    real_labels, fake_labels = get_labels(real_logit)
                    pair_loss = compute_d_pair_loss(real_logit, wrong_logit, fake_logit, real_labels, fake_labels)
                    real_labels, fake_labels = get_labels(real_img_logit_local)
                    img_loss = compute_d_img_loss(wrong_img_logit_local, real_img_logit_local,
                                                  fake_img_logit_local, real_labels, fake_labels)
                    discriminator_loss += (pair_loss + img_loss)

                    d_plot_dict[key].plot(to_numpy(img_loss).mean())

                discriminator_loss.backward()
                optimizerD.step()
                netD.zero_grad()
                d_loss_val = to_numpy(discriminator_loss).mean()
                d_loss_plot.plot(d_loss_val)

            ''' update G '''
            for p in netD.parameters():
                p.requires_grad = False
            netG.zero_grad()
            kl_loss = get_KL_Loss(mean_var[0], mean_var[1])
            kl_loss_val = to_numpy(kl_loss).mean()
            generator_loss = args.KL_COE * kl_loss
            kl_loss_plot.plot(kl_loss_val)
            for key, _ in fake_images.items():
                this_fake = fake_images[key]
                fake_pair_logit, fake_img_logit_local = netD(this_fake, embeddings)
                real_labels, _ = get_labels(fake_pair_logit)
                generator_loss += compute_g_loss(fake_pair_logit, real_labels)
                real_labels, _ = get_labels(fake_img_logit_local)
                img_loss = compute_g_loss(fake_img_logit_local, real_labels)
                generator_loss += img_loss
                g_plot_dict[key].plot(to_numpy(img_loss).mean())

            generator_loss.backward()
            optimizerG.step()
            netG.zero_grad()
            g_loss_val = to_numpy(generator_loss).mean()
            g_loss_plot.plot(g_loss_val)
        print('[epoch %d/%d]: g_loss = %.5f d_loss= %.5f' % (epoch, tot_epoch, g_loss_val, d_loss_val))


class FakeBirds(object):
    """Yields (images, wrong_images, embeddings, _, _) like HDGan's dataset sampler."""

    def __init__(self, n, batch_size, emb_dim=8):
        self.n, self.bs, self.emb_dim = n, batch_size, emb_dim

    def __iter__(self):
        for _ in range(self.n):
            imgs = {k: np.random.rand(self.bs, 3, s, s).astype(np.float32) * 2 - 1
                    for k, s in (("output_64", 8), ("output_128", 16), ("output_256", 32))}
            wrong = {k: np.random.rand(*v.shape).astype(np.float32) * 2 - 1 for k, v in imgs.items()}
            emb = np.random.randn(self.bs, self.emb_dim).astype(np.float32)
            yield imgs, wrong, emb, None, None


if __name__ == "__main__":
    class Args:
        batch_size, noise_dim, d_lr, g_lr, maxepoch = 2, 4, 2e-4, 2e-4, 3
        epoch_decay, display_freq, ncritic, KL_COE, updates_per_epoch = 100, 1, 1, 4.0, 2
    args = Args()
    netG, netD = Generator(noise_dim=args.noise_dim), Discriminator()
    train_gans((FakeBirds(8, args.batch_size), FakeBirds(2, args.batch_size)), "HDGAN_256_birds", netG, netD, args)
