# Source: https://github.com/tejank10/null-text-inversion/issues/1
"""Null-text inversion with the scheduler the notebook uses, a DDIMScheduler (the right fix: the
thread's guess, an undetached text embedding, is not the cause): a DDIM step is a function of its
arguments only, so each inner step's loss stays within that step's graph and the unconditional
embedding can be optimised step after step. The optimisation is the notebook's; DDIMScheduler.step
follows diffusers (eta=0); a small conditioned conv net stands in for Stable Diffusion's UNet,
random embeddings for CLIP, a random latent for the encoded image."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class DDIMScheduler:
    """diffusers' DDIMScheduler (eta=0): each step depends only on its arguments."""

    def __init__(self, num_train_timesteps=1000, beta_start=0.00085, beta_end=0.012):
        self.num_train_timesteps = num_train_timesteps
        betas = torch.linspace(beta_start ** 0.5, beta_end ** 0.5, num_train_timesteps) ** 2
        self.alphas_cumprod = torch.cumprod(1.0 - betas, dim=0)
        self.final_alpha_cumprod = torch.tensor(1.0)

    def set_timesteps(self, num_inference_steps):
        self.num_inference_steps = num_inference_steps
        step_ratio = self.num_train_timesteps // num_inference_steps
        self.timesteps = torch.from_numpy(
            (np.arange(0, num_inference_steps) * step_ratio).round()[::-1].copy()).long()

    def step(self, model_output, timestep, sample):
        prev_timestep = timestep - self.num_train_timesteps // self.num_inference_steps
        alpha_prod_t = self.alphas_cumprod[timestep]
        alpha_prod_t_prev = self.alphas_cumprod[prev_timestep] if prev_timestep >= 0 else self.final_alpha_cumprod
        beta_prod_t = 1 - alpha_prod_t
        pred_original_sample = (sample - beta_prod_t ** (0.5) * model_output) / alpha_prod_t ** (0.5)
        pred_sample_direction = (1 - alpha_prod_t_prev) ** (0.5) * model_output
        prev_sample = alpha_prod_t_prev ** (0.5) * pred_original_sample + pred_sample_direction
        return {"prev_sample": prev_sample}


class TinyUNet(nn.Module):
    """Predicts noise from a 4-channel latent, conditioned on a [1, tokens, dim] text embedding."""

    def __init__(self, dim=16):
        super().__init__()
        self.conv_in = nn.Conv2d(4, 16, 3, padding=1)
        self.to_scale = nn.Linear(dim, 16)
        self.time_embed = nn.Embedding(1001, 16)
        self.conv_out = nn.Conv2d(16, 4, 3, padding=1)

    def forward(self, latent, t, encoder_hidden_states):
        scale = self.to_scale(encoder_hidden_states.mean(1))[:, :, None, None]
        h = F.silu(self.conv_in(latent) + self.time_embed(t.view(1))[:, :, None, None])
        return {"sample": self.conv_out(h * (1 + scale))}


class NullInversion:
    def __init__(self, unet, scheduler):
        self.unet = unet
        self.scheduler = scheduler
        self.mse = nn.MSELoss()

    def next_step(self, model_output, timestep, sample):
        timestep, next_timestep = min(timestep - self.scheduler.num_train_timesteps
                                      // self.scheduler.num_inference_steps, 999), timestep
        alpha_prod_t = self.scheduler.alphas_cumprod[timestep] if timestep >= 0 else self.scheduler.final_alpha_cumprod
        alpha_prod_t_next = self.scheduler.alphas_cumprod[next_timestep]
        beta_prod_t = 1 - alpha_prod_t
        next_original_sample = (sample - beta_prod_t ** 0.5 * model_output) / alpha_prod_t ** 0.5
        next_sample_direction = (1 - alpha_prod_t_next) ** 0.5 * model_output
        return alpha_prod_t_next ** 0.5 * next_original_sample + next_sample_direction

    @torch.no_grad()
    def ddim_loop(self, latent, cond_embeddings, num_inference_steps):
        all_latent = [latent]
        latent = latent.clone().detach()
        for i in range(num_inference_steps):
            t = self.scheduler.timesteps[len(self.scheduler.timesteps) - i - 1]
            noise_pred = self.unet(latent, t, encoder_hidden_states=cond_embeddings)["sample"]
            latent = self.next_step(noise_pred, t, latent)
            all_latent.append(latent)
        return all_latent

    def null_optimization(self, ddim_latents, context, num_inner_steps, epsilon, num_inference_steps,
                          guidance_scale=7.5):
        uncond_embeddings, cond_embeddings = context.chunk(2)
        uncond_embeddings_list = []
        latent_cur = ddim_latents[-1]
        for i in range(num_inference_steps):
            uncond_embeddings = uncond_embeddings.clone().detach()
            uncond_embeddings.requires_grad = True
            optimizer = torch.optim.Adam([uncond_embeddings], lr=1e-2 * (1. - i / 100.))
            latent_prev = ddim_latents[len(ddim_latents) - i - 2]
            t = self.scheduler.timesteps[i]
            with torch.no_grad():
                noise_pred_cond = self.unet(latent_cur, t, encoder_hidden_states=cond_embeddings)["sample"]
            for j in range(num_inner_steps):
                noise_pred_uncond = self.unet(latent_cur, t, encoder_hidden_states=uncond_embeddings)["sample"]
                noise_pred = noise_pred_uncond + guidance_scale * (noise_pred_cond - noise_pred_uncond)
                latents_prev_rec = self.scheduler.step(noise_pred, t, latent_cur)["prev_sample"]
                loss = self.mse(latents_prev_rec, latent_prev)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                loss_item = loss.item()
                if loss_item < epsilon + i * 2e-5:
                    break
            uncond_embeddings_list.append(uncond_embeddings[:1].detach())
            with torch.no_grad():
                context = torch.cat([uncond_embeddings, cond_embeddings])
                latents_input = torch.cat([latent_cur] * 2)
                noise_pred = self.unet(latents_input, t.repeat(1), encoder_hidden_states=context)["sample"]
                noise_pred_uncond, noise_prediction_text = noise_pred.chunk(2)
                noise_pred = noise_pred_uncond + guidance_scale * (noise_prediction_text - noise_pred_uncond)
                latent_cur = self.scheduler.step(noise_pred, t, latent_cur)["prev_sample"]
        return uncond_embeddings_list

    def invert(self, image_latent, uncond_embeddings, cond_embeddings, num_inference_steps=12):
        self.scheduler.set_timesteps(num_inference_steps)
        ddim_latents = self.ddim_loop(image_latent, cond_embeddings, num_inference_steps)
        self.scheduler.set_timesteps(num_inference_steps)
        context = torch.cat([uncond_embeddings, cond_embeddings])
        return self.null_optimization(ddim_latents, context, num_inner_steps=5, epsilon=1e-5,
                                      num_inference_steps=num_inference_steps)


torch.manual_seed(0)
unet = TinyUNet()
for p in unet.parameters():
    p.requires_grad_(False)
inversion = NullInversion(unet, DDIMScheduler())
image_latent = torch.randn(1, 4, 8, 8)
uncond_embeddings, cond_embeddings = torch.randn(1, 7, 16), torch.randn(1, 7, 16)
uncond_list = inversion.invert(image_latent, uncond_embeddings, cond_embeddings)
print(len(uncond_list))
