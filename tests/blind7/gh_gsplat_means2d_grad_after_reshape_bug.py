# Source: https://github.com/nerfstudio-project/gsplat/issues/467
"""gsplat (nerfstudio-project) used without a densification strategy: the reporter wants the
image-space gradients of the projected means returned by rasterization() to drive their own
densification. They call retain_grad() on info["means2d"] but then take the statistics from a
tensor derived from it (here the camera dimension squeezed away), which is not the tensor whose
gradient was retained: its .grad is None (torch warns that a non-leaf's .grad is being accessed),
and the statistics fail on it. The answer in the thread: access exactly the tensor rasterization
returned, retain its grad, and do other operations afterwards. A small differentiable splatting
function (pinhole projection, isotropic Gaussians, normalised alpha blending) stands in for
gsplat.rasterization; the scene, camera and target image are random and tiny."""
import torch
import torch.nn.functional as F


def rasterization(means, quats, scales, opacities, colors, viewmats, Ks, width, height):
    """Returns render_colors [C, H, W, 3], render_alphas [C, H, W, 1] and info with means2d [C, N, 2]."""
    cam = torch.einsum('cij,nj->cni', viewmats[:, :3, :3], means) + viewmats[:, None, :3, 3]
    uv = torch.einsum('cij,cnj->cni', Ks, cam)
    means2d = uv[..., :2] / uv[..., 2:3]
    ys, xs = torch.meshgrid(torch.arange(height) + 0.5, torch.arange(width) + 0.5, indexing='ij')
    pix = torch.stack([xs, ys], dim=-1).reshape(-1, 2)  # [H*W, 2]
    radii = scales.exp().mean(dim=-1) * Ks[:, None, 0, 0] / cam[..., 2]  # [C, N]
    d2 = ((pix[None, :, None, :] - means2d[:, None, :, :]) ** 2).sum(-1)  # [C, H*W, N]
    alpha = torch.sigmoid(opacities)[None, None, :] * torch.exp(-0.5 * d2 / radii[:, None, :] ** 2)
    weights = alpha / (alpha.sum(-1, keepdim=True) + 1e-6)
    render_colors = (weights @ torch.sigmoid(colors)).reshape(-1, height, width, 3)
    render_alphas = alpha.sum(-1).clamp(max=1.).reshape(-1, height, width, 1)
    info = {"means2d": means2d, "radii": radii, "width": width, "height": height}
    return render_colors, render_alphas, info


N, width, height = 16, 8, 8
params = {
    "means": torch.nn.Parameter(torch.randn(N, 3) * 0.5),
    "quats": torch.nn.Parameter(F.normalize(torch.randn(N, 4), dim=-1)),
    "scales": torch.nn.Parameter(torch.full((N, 3), -1.0)),
    "opacities": torch.nn.Parameter(torch.zeros(N)),
    "colors": torch.nn.Parameter(torch.rand(N, 3)),
}
optimizers = {k: torch.optim.Adam([v], lr=1e-2) for k, v in params.items()}
viewmats = torch.eye(4)[None].clone()
viewmats[0, 2, 3] = 4.0
Ks = torch.tensor([[[8.0, 0.0, width / 2], [0.0, 8.0, height / 2], [0.0, 0.0, 1.0]]])
gt_image = torch.rand(1, height, width, 3)
grad2d_accum = torch.zeros(N)
count = torch.zeros(N)

for step in range(3):
    renders, alphas, info = rasterization(
        params["means"], params["quats"], params["scales"], params["opacities"], params["colors"],
        viewmats, Ks, width, height)
    info["means2d"].retain_grad()
    means2d = info["means2d"].squeeze(0)  # [N, 2] for the densification statistics
    loss = F.l1_loss(renders, gt_image)
    loss.backward()

    # densification statistics: image-space gradient norm of each Gaussian's projected mean
    grads = means2d.grad.clone()  # expect: GG106
    grads[..., 0] *= width / 2.0
    grads[..., 1] *= height / 2.0
    grad2d_accum += grads.norm(dim=-1)
    count += 1

    for optimizer in optimizers.values():
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
    print(step, loss.item(), (grad2d_accum / count).max().item())
