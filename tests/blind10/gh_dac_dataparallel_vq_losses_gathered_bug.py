# Source: https://github.com/descriptinc/descript-audio-codec/issues/61
"""descript-audio-codec's scripts/train.py on a machine with several GPUs visible: audiotools'
Accelerator wraps the DAC generator in DataParallel, whose gather stacks each replica's scalar
'vq/commitment_loss' and 'vq/codebook_loss' into a vector with one entry per GPU, so
output["loss"] = sum(lambdas[k] * output[k]) is a vector and accel.backward(output["loss"]) raises
"grad can be implicitly created only for scalar outputs". DAC, its residual VQ, the mel loss and
audiotools' Accelerator/GradScaler are small stand-ins; DataParallel is a CPU stand-in that splits
the batch over two replicas and gathers as torch's does (0-d outputs become a vector). The
discriminator step is left out. Fix: train on one device (CUDA_VISIBLE_DEVICES=0, as the train
command in the README does) or reduce the gathered losses with .mean()."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class DataParallel(nn.Module):
    """CPU stand-in for nn.DataParallel over `n_devices` replicas."""

    def __init__(self, module, n_devices=2):
        super().__init__()
        self.module = module
        self.n_devices = n_devices

    def forward(self, audio_data, sample_rate):
        outputs = [self.module(chunk, sample_rate) for chunk in audio_data.chunk(self.n_devices)]
        gathered = {}
        for key in outputs[0]:
            values = [o[key] for o in outputs]
            if values[0].dim() == 0:
                gathered[key] = torch.stack(values)
            else:
                gathered[key] = torch.cat(values)
        return gathered


class GradScaler:
    def __init__(self, enabled=False):
        self.enabled = enabled

    def scale(self, loss):
        return loss * 65536.0 if self.enabled else loss

    def step(self, optimizer):
        optimizer.step()

    def update(self):
        pass


class Accelerator:
    def __init__(self, amp=False, n_devices=2):
        self.amp = amp
        self.n_devices = n_devices
        self.scaler = GradScaler(enabled=amp)

    def prepare_model(self, model):
        if self.n_devices > 1:
            model = DataParallel(model, self.n_devices)
        return model

    def backward(self, loss):
        self.scaler.scale(loss).backward()  # expect: GG105

    def step(self, optimizer):
        self.scaler.step(optimizer)

    def update(self):
        self.scaler.update()


class VectorQuantize(nn.Module):
    def __init__(self, dim, codebook_size):
        super().__init__()
        self.codebook = nn.Embedding(codebook_size, dim)

    def forward(self, z):
        flat = z.permute(0, 2, 1).reshape(-1, z.shape[1])
        dist = torch.cdist(flat, self.codebook.weight)
        idx = dist.argmin(dim=1)
        z_q = self.codebook(idx).view(z.shape[0], z.shape[2], -1).permute(0, 2, 1)
        commitment_loss = F.mse_loss(z, z_q.detach())
        codebook_loss = F.mse_loss(z_q, z.detach())
        z_q = z + (z_q - z).detach()
        return z_q, commitment_loss, codebook_loss


class DAC(nn.Module):
    def __init__(self, encoder_dim=8, latent_dim=16, codebook_size=32):
        super().__init__()
        self.encoder = nn.Sequential(nn.Conv1d(1, encoder_dim, 7, padding=3), nn.ELU(),
                                     nn.Conv1d(encoder_dim, latent_dim, 4, stride=4))
        self.quantizer = VectorQuantize(latent_dim, codebook_size)
        self.decoder = nn.Sequential(nn.ConvTranspose1d(latent_dim, encoder_dim, 4, stride=4), nn.ELU(),
                                     nn.Conv1d(encoder_dim, 1, 7, padding=3), nn.Tanh())

    def forward(self, audio_data, sample_rate):
        z = self.encoder(audio_data)
        z, commitment_loss, codebook_loss = self.quantizer(z)
        x = self.decoder(z)
        return {
            "audio": x,
            "vq/commitment_loss": commitment_loss,
            "vq/codebook_loss": codebook_loss,
        }


def mel_loss(x, y):
    X = torch.stft(x.squeeze(1), n_fft=64, return_complex=True).abs()
    Y = torch.stft(y.squeeze(1), n_fft=64, return_complex=True).abs()
    return F.l1_loss(torch.log(X + 1e-5), torch.log(Y + 1e-5))


class State:
    def __init__(self, accel):
        self.generator = accel.prepare_model(DAC())
        self.optimizer_g = torch.optim.AdamW(self.generator.parameters(), lr=1e-4)


def train_loop(state, batch, accel, lambdas):
    state.generator.train()
    output = {}
    signal = batch["signal"]

    out = state.generator(signal, 44100)
    recons = out["audio"]
    commitment_loss = out["vq/commitment_loss"]
    codebook_loss = out["vq/codebook_loss"]

    output["mel/loss"] = mel_loss(recons, signal)
    output["vq/commitment_loss"] = commitment_loss
    output["vq/codebook_loss"] = codebook_loss
    output["loss"] = sum([v * output[k] for k, v in lambdas.items() if k in output])

    state.optimizer_g.zero_grad()
    accel.backward(output["loss"])
    accel.step(state.optimizer_g)
    accel.update()
    return {k: v for k, v in sorted(output.items())}


def train(accel, num_iters=2, batch_size=4):
    lambdas = {"mel/loss": 15.0, "vq/commitment_loss": 0.25, "vq/codebook_loss": 1.0}
    state = State(accel)
    for i in range(num_iters):
        batch = {"signal": torch.randn(batch_size, 1, 256) * 0.1}
        train_loop(state, batch, accel, lambdas)


if __name__ == "__main__":
    accel = Accelerator(amp=False, n_devices=2)
    train(accel)
