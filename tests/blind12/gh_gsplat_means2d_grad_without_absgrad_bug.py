# Source: https://github.com/nerfstudio-project/gsplat/issues/390
"""A user trains 3D Gaussians with gsplat's `rasterization()` and, for densification, reads the
screen-space gradients from `info["means2d"]` after `loss.backward()`. With `absgrad=True` the
rasterizer's backward hook fills `info["means2d"].absgrad`; with `absgrad=False` the user reads
`info["means2d"].grad`, but means2d is an intermediate (non-leaf) tensor of the projection, so torch
warns "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed" and returns
None; the densification statistics then fail on the None. Fix from the thread (_ok): call
`info["means2d"].retain_grad()` after rasterization, before backward. gsplat's rasterization (a
projection plus a dense Gaussian splatting render) and the scene are small stand-ins written here.
"""
import torch
import torch.nn.functional as F


def rasterization(means, quats, scales, opacities, colors, viewmats, Ks, width, height, absgrad=False):
    """Stand-in for gsplat.rasterization: pinhole projection, isotropic 2D splats, alpha blending."""
    cam = means @ viewmats[0, :3, :3].T + viewmats[0, :3, 3]
    depths = cam[:, 2].clamp(min=0.1)
    means2d = torch.stack([Ks[0, 0, 0] * cam[:, 0] / depths + Ks[0, 0, 2],
                           Ks[0, 1, 1] * cam[:, 1] / depths + Ks[0, 1, 2]], dim=-1)
    radii = (scales.mean(dim=-1) * Ks[0, 0, 0] / depths).clamp(min=0.5)
    ys, xs = torch.meshgrid(torch.arange(height, dtype=torch.float32),
                            torch.arange(width, dtype=torch.float32), indexing="ij")
    pix = torch.stack([xs, ys], dim=-1).reshape(-1, 1, 2)
    d2 = ((pix - means2d.unsqueeze(0)) ** 2).sum(-1) / (radii.unsqueeze(0) ** 2)
    alpha = (opacities.unsqueeze(0) * torch.exp(-0.5 * d2)).clamp(max=0.99)
    order = torch.argsort(depths)
    alpha, cols = alpha[:, order], colors[order]
    trans = torch.cumprod(torch.cat([torch.ones_like(alpha[:, :1]), 1 - alpha[:, :-1]], dim=1), dim=1)
    image = ((alpha * trans).unsqueeze(-1) * cols.unsqueeze(0)).sum(1).reshape(1, height, width, 3)
    if absgrad:
        def _hook(grad):
            means2d.absgrad = grad.abs()
        means2d.register_hook(_hook)
    info = {"means2d": means2d, "radii": radii, "depths": depths, "width": width, "height": height}
    return image, None, info


class GaussianModel(torch.nn.Module):
    def __init__(self, n=64):
        super().__init__()
        self.means = torch.nn.Parameter(torch.randn(n, 3) * 0.5)
        self.quats = torch.nn.Parameter(F.normalize(torch.randn(n, 4), dim=-1))
        self.scales = torch.nn.Parameter(torch.full((n, 3), -2.0))
        self.opacities = torch.nn.Parameter(torch.zeros(n))
        self.colors = torch.nn.Parameter(torch.rand(n, 3))


class DensifyState:
    def __init__(self, n):
        self.grad2d = torch.zeros(n)
        self.count = torch.zeros(n)

    def update(self, info, absgrad):
        if absgrad:
            grads = info["means2d"].absgrad.clone()
        else:
            grads = info["means2d"].grad.clone()  # expect: GG106
        grads[..., 0] *= info["width"] / 2.0
        grads[..., 1] *= info["height"] / 2.0
        sel = info["radii"] > 0.0
        self.grad2d[sel] += grads[sel].norm(dim=-1)
        self.count[sel] += 1


def train(absgrad=False, steps=3, W=16, H=16):
    model = GaussianModel()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    viewmats = torch.eye(4).unsqueeze(0)
    viewmats[0, 2, 3] = 4.0
    Ks = torch.tensor([[[20.0, 0.0, W / 2], [0.0, 20.0, H / 2], [0.0, 0.0, 1.0]]])
    gt_image = torch.rand(1, H, W, 3)
    state = DensifyState(model.means.shape[0])
    for step in range(steps):
        renders, alphas, info = rasterization(
            model.means, model.quats, torch.exp(model.scales), torch.sigmoid(model.opacities),
            model.colors, viewmats, Ks, W, H, absgrad=absgrad)
        loss = F.l1_loss(renders, gt_image)
        optimizer.zero_grad()
        loss.backward()
        state.update(info, absgrad)
        optimizer.step()
    return state


state = train(absgrad=False)
