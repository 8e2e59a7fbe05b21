# Source: https://github.com/ubc-vision/sonic/issues/2
"""SONIC's noise optimisation in a ComfyUI node with the reporter's fix: the node's function runs
under torch.inference_mode(False), so the optimisation records its graph although the host
executes nodes in inference mode, and the sampling pipeline is run under
torch.inference_mode(True) instead of torch.no_grad(). Same sampler, node and random inputs."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class TinyPipeline(nn.Module):
    """Euler steps of a velocity model from the initial noise to a latent (output_type='latent')."""
    def __init__(self, channels=4):
        super().__init__()
        self.velocity = nn.Sequential(nn.Conv2d(channels, 8, 3, padding=1), nn.SiLU(),
                                      nn.Conv2d(8, channels, 3, padding=1))

    def forward(self, latents, num_inference_steps=4):
        x = latents
        for _ in range(num_inference_steps):
            x = x - self.velocity(x) / num_inference_steps
        return x


def sonic_inpaint(pipe, target_image, mask, epsilon_original, num_iterations=3, step_nums=4, learning_rate=3.0):
    epsilon = epsilon_original.clone().float()

    # optimize spectral noise with Adam
    epsilon_freq = torch.fft.rfftn(epsilon, s=epsilon.shape[-2:], dim=(-2, -1))
    epsilon_optim_target = torch.nn.Parameter(epsilon_freq.detach().clone(), requires_grad=True)
    optimizer = torch.optim.Adam([epsilon_optim_target], lr=learning_rate)

    # optimization loop
    for i in range(num_iterations):
        epsilon_spatial = torch.fft.irfftn(epsilon_optim_target, s=epsilon.shape[-2:], dim=(-2, -1))
        # block gradients to masked region
        epsilon_combined = epsilon_spatial * mask + epsilon_original * (1 - mask)

        # obtain ε* without tracking gradients
        with torch.inference_mode(True):
            model_final_output = pipe(epsilon_combined, num_inference_steps=step_nums)
            added_noise = epsilon_combined - model_final_output

        # compute x_0_hat with gradients
        x_0_hat = epsilon_combined - added_noise

        # masked loss and optimizer step
        loss = F.mse_loss(target_image, x_0_hat, reduction="none")
        loss = (loss * mask).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(i, loss.item())

    epsilon_spatial = torch.fft.irfftn(epsilon_optim_target, s=epsilon.shape[-2:], dim=(-2, -1))
    return epsilon_spatial * mask + epsilon_original * (1 - mask)


class SonicInpaintNode:
    def __init__(self):
        torch.manual_seed(200)
        self.pipe = TinyPipeline()
        for p in self.pipe.parameters():
            p.requires_grad_(False)

    @torch.inference_mode(False)
    def run(self, target_latent, mask, initial_noise):
        target_image = target_latent * mask
        return sonic_inpaint(self.pipe, target_image, mask, initial_noise)


def execute(node, *inputs):
    """ComfyUI's executor: every node runs inside inference mode."""
    with torch.inference_mode():
        return node.run(*inputs)


target_latent = torch.randn(1, 4, 8, 8)
mask = (torch.rand(1, 1, 8, 8) > 0.3).float()
initial_noise = torch.randn(1, 4, 8, 8)
final_epsilon = execute(SonicInpaintNode(), target_latent, mask, initial_noise)
print(final_epsilon.shape)
