# Source: https://github.com/philsyn/DiffWave-Vocoder/issues/2
"""DiffWave vocoder (philsyn/DiffWave-Vocoder: WaveNet.py, util.py, train.py): a WaveNet
denoiser conditioned on mel spectrograms and diffusion-step embeddings, trained with the
DDPM epsilon-prediction loss.

`Residual_block.forward` starts with `h = x` and then adds the step embedding in place,
`h += part_t`, so it modifies its input `x`. For the first residual block `x` is the
output of `init_conv = Sequential(Conv, nn.ReLU())`, and ReluBackward0 saved that tensor,
so `loss.backward()` in train.py raises "one of the variables needed for gradient
computation has been modified by an inplace operation" (the issue; it also silently
changes the `x + res` skip path).

This is the fixed twin; the issue has no answer, the right fix is an out-of-place add,
`h = x + part_t`. Sizes are tiny (4x4 mel upsampling instead of 16x16, weight_norm
omitted), the loader is random data, .cuda() calls are dropped.
"""
import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


# ---- util.py ----------------------------------------------------------------------------
def std_normal(size):
    return torch.normal(0, 1, size=size)


def calc_diffusion_step_embedding(diffusion_steps, diffusion_step_embed_dim_in):
    assert diffusion_step_embed_dim_in % 2 == 0
    half_dim = diffusion_step_embed_dim_in // 2
    _embed = np.log(10000) / (half_dim - 1)
    _embed = torch.exp(torch.arange(half_dim) * -_embed)
    _embed = diffusion_steps * _embed
    diffusion_step_embed = torch.cat((torch.sin(_embed), torch.cos(_embed)), 1)
    return diffusion_step_embed


def calc_diffusion_hyperparams(T, beta_0, beta_T):
    Beta = torch.linspace(beta_0, beta_T, T)
    Alpha = 1 - Beta
    Alpha_bar = Alpha + 0
    Beta_tilde = Beta + 0
    for t in range(1, T):
        Alpha_bar[t] *= Alpha_bar[t - 1]
        Beta_tilde[t] *= (1 - Alpha_bar[t - 1]) / (1 - Alpha_bar[t])
    Sigma = torch.sqrt(Beta_tilde)
    _dh = {}
    _dh["T"], _dh["Beta"], _dh["Alpha"], _dh["Alpha_bar"], _dh["Sigma"] = T, Beta, Alpha, Alpha_bar, Sigma
    return _dh


def training_loss(net, loss_fn, X, diffusion_hyperparams):
    assert type(X) == tuple and len(X) == 2
    _dh = diffusion_hyperparams
    T, Alpha_bar = _dh["T"], _dh["Alpha_bar"]
    mel_spectrogram, audio = X
    B, C, L = audio.shape
    diffusion_steps = torch.randint(T, size=(B, 1, 1))
    z = std_normal(audio.shape)
    transformed_X = torch.sqrt(Alpha_bar[diffusion_steps]) * audio + torch.sqrt(1 - Alpha_bar[diffusion_steps]) * z
    epsilon_theta = net((transformed_X, mel_spectrogram, diffusion_steps.view(B, 1),))
    return loss_fn(epsilon_theta, z)


# ---- WaveNet.py ---------------------------------------------------------------------------
def swish(x):
    return x * torch.sigmoid(x)


class Conv(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size=3, dilation=1):
        super(Conv, self).__init__()
        self.padding = dilation * (kernel_size - 1) // 2
        self.conv = nn.Conv1d(in_channels, out_channels, kernel_size, dilation=dilation, padding=self.padding)
        nn.init.kaiming_normal_(self.conv.weight)

    def forward(self, x):
        out = self.conv(x)
        return out


class ZeroConv1d(nn.Module):
    def __init__(self, in_channel, out_channel):
        super(ZeroConv1d, self).__init__()
        self.conv = nn.Conv1d(in_channel, out_channel, kernel_size=1, padding=0)
        self.conv.weight.data.zero_()
        self.conv.bias.data.zero_()

    def forward(self, x):
        out = self.conv(x)
        return out


class Residual_block(nn.Module):
    def __init__(self, res_channels, skip_channels, dilation, diffusion_step_embed_dim_out, n_mels=80):
        super(Residual_block, self).__init__()
        self.res_channels = res_channels
        self.fc_t = nn.Linear(diffusion_step_embed_dim_out, self.res_channels)
        self.dilated_conv_layer = Conv(self.res_channels, 2 * self.res_channels, kernel_size=3, dilation=dilation)
        self.upsample_conv2d = torch.nn.ModuleList()
        for s in [4, 4]:
            conv_trans2d = torch.nn.ConvTranspose2d(1, 1, (3, 2 * s), padding=(1, s // 2), stride=(1, s))
            torch.nn.init.kaiming_normal_(conv_trans2d.weight)
            self.upsample_conv2d.append(conv_trans2d)
        self.mel_conv = Conv(n_mels, 2 * self.res_channels, kernel_size=1)
        self.res_conv = nn.Conv1d(res_channels, res_channels, kernel_size=1)
        nn.init.kaiming_normal_(self.res_conv.weight)
        self.skip_conv = nn.Conv1d(res_channels, skip_channels, kernel_size=1)
        nn.init.kaiming_normal_(self.skip_conv.weight)

    def forward(self, input_data):
        x, mel_spec, diffusion_step_embed = input_data
        B, C, L = x.shape
        assert C == self.res_channels

        # add in diffusion step embedding
        part_t = self.fc_t(diffusion_step_embed)
        part_t = part_t.view([B, self.res_channels, 1])
        h = x + part_t

        # dilated conv layer
        h = self.dilated_conv_layer(h)

        # Upsample spectrogram to size of audio
        mel_spec = torch.unsqueeze(mel_spec, dim=1)
        mel_spec = F.leaky_relu(self.upsample_conv2d[0](mel_spec), 0.4)
        mel_spec = F.leaky_relu(self.upsample_conv2d[1](mel_spec), 0.4)
        mel_spec = torch.squeeze(mel_spec, dim=1)
        assert (mel_spec.size(2) >= L)
        if mel_spec.size(2) > L:
            mel_spec = mel_spec[:, :, :L]

        mel_spec = self.mel_conv(mel_spec)
        h += mel_spec

        # gated-tanh nonlinearity
        out = torch.tanh(h[:, :self.res_channels, :]) * torch.sigmoid(h[:, self.res_channels:, :])

        # residual and skip outputs
        res = self.res_conv(out)
        assert x.shape == res.shape
        skip = self.skip_conv(out)

        return (x + res) * math.sqrt(0.5), skip


class Residual_group(nn.Module):
    def __init__(self, res_channels, skip_channels, num_res_layers, dilation_cycle,
                 diffusion_step_embed_dim_in, diffusion_step_embed_dim_mid, diffusion_step_embed_dim_out):
        super(Residual_group, self).__init__()
        self.num_res_layers = num_res_layers
        self.diffusion_step_embed_dim_in = diffusion_step_embed_dim_in
        self.fc_t1 = nn.Linear(diffusion_step_embed_dim_in, diffusion_step_embed_dim_mid)
        self.fc_t2 = nn.Linear(diffusion_step_embed_dim_mid, diffusion_step_embed_dim_out)
        self.residual_blocks = nn.ModuleList()
        for n in range(self.num_res_layers):
            self.residual_blocks.append(Residual_block(res_channels, skip_channels,
                                                       dilation=2 ** (n % dilation_cycle),
                                                       diffusion_step_embed_dim_out=diffusion_step_embed_dim_out))

    def forward(self, input_data):
        x, mel_spectrogram, diffusion_steps = input_data
        diffusion_step_embed = calc_diffusion_step_embedding(diffusion_steps, self.diffusion_step_embed_dim_in)
        diffusion_step_embed = swish(self.fc_t1(diffusion_step_embed))
        diffusion_step_embed = swish(self.fc_t2(diffusion_step_embed))
        h = x
        skip = 0
        for n in range(self.num_res_layers):
            h, skip_n = self.residual_blocks[n]((h, mel_spectrogram, diffusion_step_embed))
            skip += skip_n  # accumulate all skip outputs
        return skip * math.sqrt(1.0 / self.num_res_layers)


class WaveNet_vocoder(nn.Module):
    def __init__(self, in_channels, res_channels, skip_channels, out_channels, num_res_layers, dilation_cycle,
                 diffusion_step_embed_dim_in, diffusion_step_embed_dim_mid, diffusion_step_embed_dim_out):
        super(WaveNet_vocoder, self).__init__()
        self.init_conv = nn.Sequential(Conv(in_channels, res_channels, kernel_size=1), nn.ReLU())
        self.residual_layer = Residual_group(res_channels=res_channels, skip_channels=skip_channels,
                                             num_res_layers=num_res_layers, dilation_cycle=dilation_cycle,
                                             diffusion_step_embed_dim_in=diffusion_step_embed_dim_in,
                                             diffusion_step_embed_dim_mid=diffusion_step_embed_dim_mid,
                                             diffusion_step_embed_dim_out=diffusion_step_embed_dim_out)
        self.final_conv = nn.Sequential(Conv(skip_channels, skip_channels, kernel_size=1), nn.ReLU(),
                                        ZeroConv1d(skip_channels, out_channels))

    def forward(self, input_data):
        audio, mel_spectrogram, diffusion_steps = input_data
        x = audio
        x = self.init_conv(x)
        x = self.residual_layer((x, mel_spectrogram, diffusion_steps))
        x = self.final_conv(x)
        return x


# ---- train.py ----------------------------------------------------------------------------
def train(n_iters, learning_rate, wavenet_config, diffusion_config, batch_size=2):
    diffusion_hyperparams = calc_diffusion_hyperparams(**diffusion_config)
    # stand-in for load_LJSpeech: (mel_spectrogram, audio) pairs, 16x upsampling
    trainloader = [(torch.randn(batch_size, 80, 4), torch.randn(batch_size, 64)) for _ in range(2)]
    net = WaveNet_vocoder(**wavenet_config)
    optimizer = torch.optim.Adam(net.parameters(), lr=learning_rate)

    n_iter = 0
    while n_iter < n_iters + 1:
        for mel_spectrogram, audio in trainloader:
            audio = audio.unsqueeze(1)

            # back-propagation
            optimizer.zero_grad()
            X = (mel_spectrogram, audio)
            loss = training_loss(net, nn.MSELoss(), X, diffusion_hyperparams)
            reduced_loss = loss.item()
            loss.backward()
            optimizer.step()
            print("iteration: {} \treduced loss: {} \tloss: {}".format(n_iter, reduced_loss, loss.item()))
            n_iter += 1


if __name__ == "__main__":
    torch.manual_seed(0)
    wavenet_config = {"in_channels": 1, "out_channels": 1, "num_res_layers": 2, "res_channels": 8,
                      "skip_channels": 8, "dilation_cycle": 2, "diffusion_step_embed_dim_in": 16,
                      "diffusion_step_embed_dim_mid": 16, "diffusion_step_embed_dim_out": 16}
    diffusion_config = {"T": 20, "beta_0": 0.0001, "beta_T": 0.02}
    train(n_iters=2, learning_rate=2e-4, wavenet_config=wavenet_config, diffusion_config=diffusion_config)
