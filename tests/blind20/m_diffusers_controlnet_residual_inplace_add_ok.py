# Source: https://github.com/huggingface/diffusers/commit/e2d9a9bea071d4826a231c0a933351949a837958
"""diffusers, before commit e2d9a9b "fix the in-place modification in unet condition when using
controlnet (#2586)".

``UNet2DConditionModel.forward`` adds the ControlNet residuals to the skip connections of the down
blocks with an in-place add::

    for down_block_res_sample, down_block_additional_residual in zip(...):
        down_block_res_sample += down_block_additional_residual
    ...
    sample += mid_block_additional_residual

The reporter trains the ControlNet *and* fine-tunes the UNet (the PR thread: "as long as you want to
also fine-tune the UNet" the error appears). Then the skip tensors are part of the UNet graph: each of
them was already consumed by the next layer of the down path (the GroupNorm of the next resnet, the
downsampling conv), which saved it for backward. The in-place add bumps their version and
``loss.backward()`` raises "one of the variables needed for gradient computation has been modified by
an inplace operation". (With a frozen UNet and no-grad latents nothing in the UNet down path is
recorded, which is why the maintainer did not see it.)

This is the fixed version. Fix (the commit): out-of-place adds, ``down_block_res_sample = down_block_res_sample +
down_block_additional_residual`` and ``sample = sample + mid_block_additional_residual``.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)


# ---- diffusers/models/embeddings.py ----------------------------------------------------------

def get_timestep_embedding(timesteps, embedding_dim, flip_sin_to_cos=False, downscale_freq_shift=1,
                           scale=1, max_period=10000):
    half_dim = embedding_dim // 2
    exponent = -math.log(max_period) * torch.arange(start=0, end=half_dim, dtype=torch.float32)
    exponent = exponent / (half_dim - downscale_freq_shift)
    emb = torch.exp(exponent)
    emb = timesteps[:, None].float() * emb[None, :]
    emb = scale * emb
    emb = torch.cat([torch.sin(emb), torch.cos(emb)], dim=-1)
    if flip_sin_to_cos:
        emb = torch.cat([emb[:, half_dim:], emb[:, :half_dim]], dim=-1)
    return emb


class Timesteps(nn.Module):
    def __init__(self, num_channels, flip_sin_to_cos, downscale_freq_shift):
        super().__init__()
        self.num_channels = num_channels
        self.flip_sin_to_cos = flip_sin_to_cos
        self.downscale_freq_shift = downscale_freq_shift

    def forward(self, timesteps):
        return get_timestep_embedding(timesteps, self.num_channels, flip_sin_to_cos=self.flip_sin_to_cos,
                                      downscale_freq_shift=self.downscale_freq_shift)


class TimestepEmbedding(nn.Module):
    def __init__(self, in_channels, time_embed_dim):
        super().__init__()
        self.linear_1 = nn.Linear(in_channels, time_embed_dim)
        self.act = nn.SiLU()
        self.linear_2 = nn.Linear(time_embed_dim, time_embed_dim)

    def forward(self, sample, condition=None):
        sample = self.linear_1(sample)
        sample = self.act(sample)
        sample = self.linear_2(sample)
        return sample


# ---- diffusers/models/resnet.py --------------------------------------------------------------

class Downsample2D(nn.Module):
    def __init__(self, channels, out_channels=None):
        super().__init__()
        out_channels = out_channels or channels
        self.conv = nn.Conv2d(channels, out_channels, 3, stride=2, padding=1)

    def forward(self, hidden_states):
        return self.conv(hidden_states)


class Upsample2D(nn.Module):
    def __init__(self, channels, out_channels=None):
        super().__init__()
        out_channels = out_channels or channels
        self.conv = nn.Conv2d(channels, out_channels, 3, padding=1)

    def forward(self, hidden_states, output_size=None):
        if output_size is None:
            hidden_states = F.interpolate(hidden_states, scale_factor=2.0, mode="nearest")
        else:
            hidden_states = F.interpolate(hidden_states, size=output_size, mode="nearest")
        return self.conv(hidden_states)


class ResnetBlock2D(nn.Module):
    def __init__(self, *, in_channels, out_channels=None, temb_channels=32, groups=4, dropout=0.0,
                 output_scale_factor=1.0):
        super().__init__()
        out_channels = in_channels if out_channels is None else out_channels
        self.norm1 = nn.GroupNorm(num_groups=groups, num_channels=in_channels, eps=1e-6, affine=True)
        self.conv1 = nn.Conv2d(in_channels, out_channels, kernel_size=3, stride=1, padding=1)
        self.time_emb_proj = nn.Linear(temb_channels, out_channels)
        self.norm2 = nn.GroupNorm(num_groups=groups, num_channels=out_channels, eps=1e-6, affine=True)
        self.dropout = nn.Dropout(dropout)
        self.conv2 = nn.Conv2d(out_channels, out_channels, kernel_size=3, stride=1, padding=1)
        self.nonlinearity = nn.SiLU()
        self.output_scale_factor = output_scale_factor
        self.conv_shortcut = None
        if in_channels != out_channels:
            self.conv_shortcut = nn.Conv2d(in_channels, out_channels, kernel_size=1, stride=1, padding=0)

    def forward(self, input_tensor, temb):
        hidden_states = input_tensor
        hidden_states = self.norm1(hidden_states)
        hidden_states = self.nonlinearity(hidden_states)
        hidden_states = self.conv1(hidden_states)
        if temb is not None:
            temb = self.time_emb_proj(self.nonlinearity(temb))[:, :, None, None]
            hidden_states = hidden_states + temb
        hidden_states = self.norm2(hidden_states)
        hidden_states = self.nonlinearity(hidden_states)
        hidden_states = self.dropout(hidden_states)
        hidden_states = self.conv2(hidden_states)
        if self.conv_shortcut is not None:
            input_tensor = self.conv_shortcut(input_tensor)
        output_tensor = (input_tensor + hidden_states) / self.output_scale_factor
        return output_tensor


# ---- diffusers/models/unet_2d_blocks.py ------------------------------------------------------

class DownBlock2D(nn.Module):
    def __init__(self, in_channels, out_channels, temb_channels, num_layers=1, add_downsample=True):
        super().__init__()
        resnets = []
        for i in range(num_layers):
            in_channels = in_channels if i == 0 else out_channels
            resnets.append(ResnetBlock2D(in_channels=in_channels, out_channels=out_channels,
                                         temb_channels=temb_channels))
        self.resnets = nn.ModuleList(resnets)
        if add_downsample:
            self.downsamplers = nn.ModuleList([Downsample2D(out_channels)])
        else:
            self.downsamplers = None

    def forward(self, hidden_states, temb=None):
        output_states = ()
        for resnet in self.resnets:
            hidden_states = resnet(hidden_states, temb)
            output_states += (hidden_states,)
        if self.downsamplers is not None:
            for downsampler in self.downsamplers:
                hidden_states = downsampler(hidden_states)
            output_states += (hidden_states,)
        return hidden_states, output_states


class UNetMidBlock2D(nn.Module):
    def __init__(self, in_channels, temb_channels, num_layers=1):
        super().__init__()
        self.resnets = nn.ModuleList(
            [ResnetBlock2D(in_channels=in_channels, out_channels=in_channels, temb_channels=temb_channels)
             for _ in range(num_layers + 1)]
        )

    def forward(self, hidden_states, temb=None, encoder_hidden_states=None, attention_mask=None,
                cross_attention_kwargs=None):
        for resnet in self.resnets:
            hidden_states = resnet(hidden_states, temb)
        return hidden_states


class UpBlock2D(nn.Module):
    def __init__(self, in_channels, prev_output_channel, out_channels, temb_channels, num_layers=2,
                 add_upsample=True):
        super().__init__()
        resnets = []
        for i in range(num_layers):
            res_skip_channels = in_channels if (i == num_layers - 1) else out_channels
            resnet_in_channels = prev_output_channel if i == 0 else out_channels
            resnets.append(ResnetBlock2D(in_channels=resnet_in_channels + res_skip_channels,
                                         out_channels=out_channels, temb_channels=temb_channels))
        self.resnets = nn.ModuleList(resnets)
        if add_upsample:
            self.upsamplers = nn.ModuleList([Upsample2D(out_channels)])
        else:
            self.upsamplers = None

    def forward(self, hidden_states, res_hidden_states_tuple, temb=None, upsample_size=None):
        for resnet in self.resnets:
            # pop res hidden states
            res_hidden_states = res_hidden_states_tuple[-1]
            res_hidden_states_tuple = res_hidden_states_tuple[:-1]
            hidden_states = torch.cat([hidden_states, res_hidden_states], dim=1)
            hidden_states = resnet(hidden_states, temb)
        if self.upsamplers is not None:
            for upsampler in self.upsamplers:
                hidden_states = upsampler(hidden_states, upsample_size)
        return hidden_states


# ---- diffusers/models/unet_2d_condition.py ---------------------------------------------------

class UNet2DConditionModel(nn.Module):
    def __init__(self, in_channels=4, out_channels=4, block_out_channels=(8, 16), layers_per_block=1):
        super().__init__()
        time_embed_dim = block_out_channels[0] * 4
        self.conv_in = nn.Conv2d(in_channels, block_out_channels[0], kernel_size=3, padding=1)
        self.time_proj = Timesteps(block_out_channels[0], True, 0)
        self.time_embedding = TimestepEmbedding(block_out_channels[0], time_embed_dim)
        self.class_embedding = None

        self.down_blocks = nn.ModuleList([])
        output_channel = block_out_channels[0]
        for i in range(len(block_out_channels)):
            input_channel = output_channel
            output_channel = block_out_channels[i]
            is_final_block = i == len(block_out_channels) - 1
            self.down_blocks.append(DownBlock2D(input_channel, output_channel, time_embed_dim,
                                                num_layers=layers_per_block,
                                                add_downsample=not is_final_block))

        self.mid_block = UNetMidBlock2D(block_out_channels[-1], time_embed_dim)

        self.up_blocks = nn.ModuleList([])
        reversed_block_out_channels = list(reversed(block_out_channels))
        output_channel = reversed_block_out_channels[0]
        for i in range(len(block_out_channels)):
            is_final_block = i == len(block_out_channels) - 1
            prev_output_channel = output_channel
            output_channel = reversed_block_out_channels[i]
            input_channel = reversed_block_out_channels[min(i + 1, len(block_out_channels) - 1)]
            self.up_blocks.append(UpBlock2D(input_channel, prev_output_channel, output_channel,
                                            time_embed_dim, num_layers=layers_per_block + 1,
                                            add_upsample=not is_final_block))
        self.num_upsamplers = len(block_out_channels) - 1

        self.conv_norm_out = nn.GroupNorm(num_channels=block_out_channels[0], num_groups=4, eps=1e-5)
        self.conv_act = nn.SiLU()
        self.conv_out = nn.Conv2d(block_out_channels[0], out_channels, kernel_size=3, padding=1)

    def forward(self, sample, timestep, encoder_hidden_states, class_labels=None,
                down_block_additional_residuals=None, mid_block_additional_residual=None,
                return_dict=True):
        default_overall_up_factor = 2 ** self.num_upsamplers
        forward_upsample_size = False
        upsample_size = None
        if any(s % default_overall_up_factor != 0 for s in sample.shape[-2:]):
            forward_upsample_size = True

        # 1. time
        timesteps = timestep
        timesteps = timesteps.expand(sample.shape[0])
        t_emb = self.time_proj(timesteps)
        emb = self.time_embedding(t_emb)

        # 2. pre-process
        sample = self.conv_in(sample)

        # 3. down
        down_block_res_samples = (sample,)
        for downsample_block in self.down_blocks:
            sample, res_samples = downsample_block(hidden_states=sample, temb=emb)
            down_block_res_samples += res_samples

        if down_block_additional_residuals is not None:
            new_down_block_res_samples = ()

            for down_block_res_sample, down_block_additional_residual in zip(
                down_block_res_samples, down_block_additional_residuals
            ):
                down_block_res_sample = down_block_res_sample + down_block_additional_residual
                new_down_block_res_samples += (down_block_res_sample,)

            down_block_res_samples = new_down_block_res_samples

        # 4. mid
        if self.mid_block is not None:
            sample = self.mid_block(sample, emb, encoder_hidden_states=encoder_hidden_states)

        if mid_block_additional_residual is not None:
            sample = sample + mid_block_additional_residual

        # 5. up
        for i, upsample_block in enumerate(self.up_blocks):
            is_final_block = i == len(self.up_blocks) - 1
            res_samples = down_block_res_samples[-len(upsample_block.resnets):]
            down_block_res_samples = down_block_res_samples[: -len(upsample_block.resnets)]
            if not is_final_block and forward_upsample_size:
                upsample_size = down_block_res_samples[-1].shape[2:]
            sample = upsample_block(hidden_states=sample, temb=emb, res_hidden_states_tuple=res_samples,
                                    upsample_size=upsample_size)

        # 6. post-process
        sample = self.conv_norm_out(sample)
        sample = self.conv_act(sample)
        sample = self.conv_out(sample)
        if not return_dict:
            return (sample,)
        return {"sample": sample}


# ---- diffusers/models/controlnet.py ----------------------------------------------------------

def zero_module(module):
    for p in module.parameters():
        nn.init.zeros_(p)
    return module


class ControlNetModel(nn.Module):
    def __init__(self, in_channels=4, conditioning_channels=3, block_out_channels=(8, 16), layers_per_block=1):
        super().__init__()
        time_embed_dim = block_out_channels[0] * 4
        self.conv_in = nn.Conv2d(in_channels, block_out_channels[0], kernel_size=3, padding=1)
        self.time_proj = Timesteps(block_out_channels[0], True, 0)
        self.time_embedding = TimestepEmbedding(block_out_channels[0], time_embed_dim)
        self.controlnet_cond_embedding = nn.Sequential(
            nn.Conv2d(conditioning_channels, 16, kernel_size=3, padding=1), nn.SiLU(),
            zero_module(nn.Conv2d(16, block_out_channels[0], kernel_size=3, padding=1)))

        self.down_blocks = nn.ModuleList([])
        self.controlnet_down_blocks = nn.ModuleList([])
        output_channel = block_out_channels[0]
        self.controlnet_down_blocks.append(zero_module(nn.Conv2d(output_channel, output_channel, kernel_size=1)))
        for i in range(len(block_out_channels)):
            input_channel = output_channel
            output_channel = block_out_channels[i]
            is_final_block = i == len(block_out_channels) - 1
            self.down_blocks.append(DownBlock2D(input_channel, output_channel, time_embed_dim,
                                                num_layers=layers_per_block,
                                                add_downsample=not is_final_block))
            for _ in range(layers_per_block):
                self.controlnet_down_blocks.append(zero_module(nn.Conv2d(output_channel, output_channel, 1)))
            if not is_final_block:
                self.controlnet_down_blocks.append(zero_module(nn.Conv2d(output_channel, output_channel, 1)))

        mid_block_channel = block_out_channels[-1]
        self.controlnet_mid_block = zero_module(nn.Conv2d(mid_block_channel, mid_block_channel, kernel_size=1))
        self.mid_block = UNetMidBlock2D(mid_block_channel, time_embed_dim)

    def forward(self, sample, timestep, encoder_hidden_states, controlnet_cond, return_dict=True):
        timesteps = timestep.expand(sample.shape[0])
        emb = self.time_embedding(self.time_proj(timesteps))

        sample = self.conv_in(sample)
        controlnet_cond = self.controlnet_cond_embedding(controlnet_cond)
        sample = sample + controlnet_cond

        down_block_res_samples = (sample,)
        for downsample_block in self.down_blocks:
            sample, res_samples = downsample_block(hidden_states=sample, temb=emb)
            down_block_res_samples += res_samples

        sample = self.mid_block(sample, emb, encoder_hidden_states=encoder_hidden_states)

        controlnet_down_block_res_samples = ()
        for down_block_res_sample, controlnet_block in zip(down_block_res_samples, self.controlnet_down_blocks):
            down_block_res_sample = controlnet_block(down_block_res_sample)
            controlnet_down_block_res_samples += (down_block_res_sample,)
        down_block_res_samples = controlnet_down_block_res_samples
        mid_block_res_sample = self.controlnet_mid_block(sample)

        if not return_dict:
            return (down_block_res_samples, mid_block_res_sample)
        return {"down_block_res_samples": down_block_res_samples, "mid_block_res_sample": mid_block_res_sample}


# ---- examples/controlnet/train_controlnet.py (ControlNet + UNet fine-tuning) ------------------

class DDPMScheduler:
    def __init__(self, num_train_timesteps=1000):
        self.num_train_timesteps = num_train_timesteps
        betas = torch.linspace(0.0001, 0.02, num_train_timesteps)
        self.alphas_cumprod = torch.cumprod(1.0 - betas, dim=0)

    def add_noise(self, original_samples, noise, timesteps):
        sqrt_alpha_prod = self.alphas_cumprod[timesteps].sqrt()[:, None, None, None]
        sqrt_one_minus_alpha_prod = (1 - self.alphas_cumprod[timesteps]).sqrt()[:, None, None, None]
        return sqrt_alpha_prod * original_samples + sqrt_one_minus_alpha_prod * noise


unet = UNet2DConditionModel()
controlnet = ControlNetModel()
noise_scheduler = DDPMScheduler()

unet.train()
controlnet.train()
params_to_optimize = list(controlnet.parameters()) + list(unet.parameters())
optimizer = torch.optim.AdamW(params_to_optimize, lr=1e-4)

train_dataloader = [
    {"latents": torch.randn(2, 4, 8, 8), "conditioning_pixel_values": torch.rand(2, 3, 8, 8),
     "encoder_hidden_states": torch.randn(2, 5, 16)}
    for _ in range(2)
]

for epoch in range(1):
    for step, batch in enumerate(train_dataloader):
        latents = batch["latents"]
        noise = torch.randn_like(latents)
        bsz = latents.shape[0]
        timesteps = torch.randint(0, noise_scheduler.num_train_timesteps, (1,)).long()
        noisy_latents = noise_scheduler.add_noise(latents, noise, timesteps.expand(bsz))
        encoder_hidden_states = batch["encoder_hidden_states"]
        controlnet_image = batch["conditioning_pixel_values"]

        down_block_res_samples, mid_block_res_sample = controlnet(
            noisy_latents,
            timesteps,
            encoder_hidden_states=encoder_hidden_states,
            controlnet_cond=controlnet_image,
            return_dict=False,
        )

        # Predict the noise residual
        model_pred = unet(
            noisy_latents,
            timesteps,
            encoder_hidden_states=encoder_hidden_states,
            down_block_additional_residuals=down_block_res_samples,
            mid_block_additional_residual=mid_block_res_sample,
        )["sample"]

        target = noise
        loss = F.mse_loss(model_pred.float(), target.float(), reduction="mean")

        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        print(epoch, step, loss.item())
