# Source: https://github.com/minyoungg/vqtorch/issues/3
"""vqtorch's VectorQuant with an `inplace_optimizer`: during the forward pass, quantize() backwards
`((z_q - z.detach()) ** 2).mean()` and steps a private optimizer on the codebook, then looks the
codes up again in the same `codebook` tensor. With the README's affine reparameterisation
(`affine_lr > 0`) that tensor is the output of AffineTransform (`scale * codebook + bias`), whose
saved tensors the in-forward backward has just freed. The reporter keeps the commitment loss in
the training loss ("the same code works fine when inplace_optimizer is not used"), and that loss
reaches the codebook through the re-looked-up z_q, so the training step's backward raises "Trying
to backward through the graph a second time". The maintainer: "each forward call in training mode
will update the codebook when inplace_optimizer is provided". (The thread has no program; the
affine setting and the kept commitment loss are what make vqtorch's code raise there.) VectorQuant,
AffineTransform and the repository's MNIST classifier example are kept, small: distances by
torch.cdist, random 1x8x8 images with random labels."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class AffineTransform(nn.Module):
    def __init__(self, feature_size, num_groups=1, lr_scale=1.0):
        super().__init__()
        self.lr_scale = lr_scale
        self.num_groups = num_groups
        self.scale = nn.parameter.Parameter(torch.zeros(num_groups, feature_size))
        self.bias = nn.parameter.Parameter(torch.zeros(num_groups, feature_size))

    def get_affine_params(self):
        scale = (1. + self.lr_scale * self.scale)
        bias = self.lr_scale * self.bias
        return scale, bias

    def forward(self, codebook):
        scale, bias = self.get_affine_params()
        n, c = codebook.shape
        codebook = codebook.view(self.num_groups, -1, codebook.shape[-1])
        codebook = scale.unsqueeze(1) * codebook + bias.unsqueeze(1)
        return codebook.reshape(n, c)


class VectorQuant(nn.Module):
    def __init__(self, feature_size, num_codes, beta=0.95, affine_lr=0.0, inplace_optimizer=None):
        super().__init__()
        self.feature_size, self.num_codes = feature_size, num_codes
        self.beta = beta
        self.codebook = nn.Embedding(self.num_codes, self.feature_size)
        if inplace_optimizer is not None:
            if beta != 1.0:
                raise ValueError("inplace_optimizer can only be used with beta=1.0")
            self.inplace_codebook_optimizer = inplace_optimizer(self.codebook.parameters())
        if affine_lr > 0:
            self.affine_transform = AffineTransform(feature_size, lr_scale=affine_lr)

    def straight_through_approximation(self, z, z_q):
        return z + (z_q - z).detach()

    def compute_loss(self, z_e, z_q):
        return (1.0 - self.beta) * F.mse_loss(z_e, z_q.detach()) + self.beta * F.mse_loss(z_e.detach(), z_q)

    def quantize(self, codebook, z):
        z_flat = z.reshape(-1, z.size(-1))
        if hasattr(self, "affine_transform"):
            codebook = self.affine_transform(codebook)
        with torch.no_grad():
            q = torch.cdist(z_flat, codebook).argmin(dim=-1).view(z.shape[:-1])

        z_q = F.embedding(q, codebook)

        if self.training and hasattr(self, "inplace_codebook_optimizer"):
            # update codebook inplace
            ((z_q - z.detach()) ** 2).mean().backward()
            self.inplace_codebook_optimizer.step()
            self.inplace_codebook_optimizer.zero_grad()

            # forward pass again with the update codebook
            z_q = F.embedding(q, codebook)
        return z_q, q

    def forward(self, z):
        z = z.permute(0, 2, 3, 1)  # quantize along the channel dimension
        z_q, q = self.quantize(self.codebook.weight, z)
        to_return = {"z": z, "z_q": z_q, "q": q, "loss": self.compute_loss(z, z_q).mean()}
        z_q = self.straight_through_approximation(z, z_q)
        return z_q.permute(0, 3, 1, 2), to_return


class SimpleVQClassifier(nn.Module):
    def __init__(self, **vq_kwargs):
        super().__init__()
        self.layers = nn.ModuleList([
            nn.Conv2d(1, 8, kernel_size=3, stride=1, padding=1),
            nn.MaxPool2d(kernel_size=2, stride=2),
            nn.GELU(),
            VectorQuant(8, **vq_kwargs),
            nn.Conv2d(8, 16, kernel_size=3, stride=1, padding=1),
            nn.AdaptiveMaxPool2d((1, 1)),
            nn.Flatten(),
            nn.Linear(16, 10),
        ])

    def forward(self, x):
        for layer in self.layers:
            if isinstance(layer, VectorQuant):
                x, vq_dict = layer(x)
            else:
                x = layer(x)
        return x, vq_dict


def train(model, train_loader, train_iterations=3, alpha=10, ignore_commitment_loss=False):
    criterion = nn.CrossEntropyLoss()
    for it in range(train_iterations):
        opt.zero_grad()
        x, y = train_loader[it % len(train_loader)]
        out, vq_out = model(x)
        sce_loss = criterion(out, y)
        cmt_loss = vq_out['loss']

        if ignore_commitment_loss:
            sce_loss.backward()
        else:
            (sce_loss + alpha * cmt_loss).backward()  # expect: GG101

        opt.step()
        print(f'sce loss: {sce_loss.item():.3f} | cmt loss: {cmt_loss.item():.3f}')


num_codes = 16
train_dataset = [(torch.randn(8, 1, 8, 8), torch.randint(0, 10, (8,))) for _ in range(2)]
inplace_optimizer = lambda *args, **kwargs: torch.optim.SGD(*args, **kwargs, lr=50.0, momentum=0.9)
model = SimpleVQClassifier(num_codes=num_codes, beta=1.0, affine_lr=2.0, inplace_optimizer=inplace_optimizer)
opt = torch.optim.AdamW(model.parameters(), lr=3e-4)
train(model, train_dataset, train_iterations=3)
