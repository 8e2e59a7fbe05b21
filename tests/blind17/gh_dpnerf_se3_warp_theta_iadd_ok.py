# Source: https://github.com/dogyoonlee/DP-NeRF/issues/2
"""Fixed twin (the reporter's fix from the thread: `theta = theta + 1.0e-10`, out of place). DP-NeRF (rigid blurring kernel for deblurring NeRF), utils/rigid_warping.py: `SE3Field.warp` takes
`theta = torch.linalg.norm(rot, axis=-1)` and then pads it in place, `theta += 1.0e-10`, before dividing
rot and trans by it. The norm saved its result for the backward, so `loss.backward()` in run_dpnerf.py's
train loop raises "one of the variables needed for gradient computation has been modified by an inplace
operation: [...], which is output 0 of LinalgVectorNormBackward0". Fix (the reporter's, in the thread):
`theta = theta + 1.0e-10`. The NeRF, the rigid blurring kernel's heads and the rays are small stand-ins
(random rays and images, 3 iterations, CPU).
"""
import torch
import torch.nn as nn
import torch.nn.functional as F


class SE3Field():
    """
        warp the given points with rotation(r) and translation(v) value.
    """
    def __init__(self):
        super(SE3Field, self).__init__()
        self.rigid_body = Rigid_body()

    def warp(self, pts, rot, trans):
        '''
            pts: N_rays*N_samples x 3
            rot: N_rays*N_samples x 3
            trans: N_rays*N_samples x 3
        '''
        theta = torch.linalg.norm(rot, axis=-1)  # N_rays*N_samples
        theta = theta + 1.0e-10
        rot = rot / theta.unsqueeze(-1)  # N_rays*N_samples x 3
        trans = trans / theta.unsqueeze(-1)  # N_rays*N_samples x 3
        screw_axis = torch.cat([rot, trans], axis=-1)  # N_rays*N_samples x 6
        transform = self.rigid_body.exp_se3(screw_axis, theta)  # N_rays*N_samples x 4 x 4
        warped_pts = torch.matmul(transform, self.rigid_body.to_homogenous(pts)[..., None]).squeeze(-1)
        warped_pts = self.rigid_body.from_homogenous(warped_pts)
        return warped_pts


class Rigid_body():
    def __init__(self):
        super(Rigid_body, self).__init__()

    def exp_se3(self, S, theta):
        w, v = torch.split(S, [3, 3], dim=-1)
        W = self.skew(w)
        R = self.exp_so3(w, theta)
        theta = theta[..., None, None]
        p = torch.matmul((theta * torch.eye(3)[None, ...] + (1.0 - torch.cos(theta)) * W +
                          (theta - torch.sin(theta)) * torch.matmul(W, W)), v[..., None])
        return self.rp_to_se3(R, p)

    def exp_so3(self, w, theta):
        W = self.skew(w)
        theta = theta[..., None, None]
        return (torch.eye(3)[None, ...] + torch.sin(theta) * W + (1.0 - torch.cos(theta)) * torch.matmul(W, W))

    def skew(self, w):
        w_new = torch.zeros_like(w).unsqueeze(1).repeat(1, 3, 1)
        w_re = torch.reshape(w_new, (w.shape[0], 9))
        w_re[..., 1] = -w[..., 2]
        w_re[..., 2] = w[..., 1]
        w_re[..., 3] = w[..., 2]
        w_re[..., 5] = -w[..., 0]
        w_re[..., 6] = -w[..., 1]
        w_re[..., 7] = w[..., 0]
        return w_re.reshape((w.shape[0], 3, 3))

    def rp_to_se3(self, R, p):
        RT_mat = torch.cat([R, p], -1)
        filling_mat = torch.tensor([0.0, 0.0, 0.0, 1.0])[None, None, ...].repeat(RT_mat.shape[0], 1, 1)
        return torch.cat([RT_mat, filling_mat], dim=-2)

    def to_homogenous(self, v):
        return torch.cat([v, torch.ones_like(v[..., :1])], axis=-1)

    def from_homogenous(self, v):
        return v[..., :3] / v[..., -1:]


class RigidBlurringKernel(nn.Module):
    """DP-NeRF's rigid blurring kernel (stand-in): per image embedding -> rotation/translation."""
    def __init__(self, num_img, num_motion=2, W=16):
        super().__init__()
        self.num_motion = num_motion
        self.img_embed = nn.Embedding(num_img, W)
        self.rot_head = nn.Linear(W, 3 * num_motion)
        self.trans_head = nn.Linear(W, 3 * num_motion)
        self.se3 = SE3Field()

    def forward(self, pts, img_idx):
        # pts: N_rays x N_samples x 3 -> (num_motion+1) warped copies
        N_rays, N_samples, _ = pts.shape
        h = F.relu(self.img_embed(img_idx))                      # N_rays x W
        rot = self.rot_head(h).view(N_rays, self.num_motion, 3) * 0.1
        trans = self.trans_head(h).view(N_rays, self.num_motion, 3) * 0.1
        all_pts = [pts]
        for k in range(self.num_motion):
            r = rot[:, None, k].expand(N_rays, N_samples, 3).reshape(-1, 3)
            t = trans[:, None, k].expand(N_rays, N_samples, 3).reshape(-1, 3)
            warped = self.se3.warp(pts.reshape(-1, 3), r, t)
            all_pts.append(warped.view(N_rays, N_samples, 3))
        return torch.stack(all_pts, 0)


class NeRF(nn.Module):
    def __init__(self, W=32):
        super().__init__()
        self.pts_linears = nn.Sequential(nn.Linear(3, W), nn.ReLU(), nn.Linear(W, W), nn.ReLU())
        self.out = nn.Linear(W, 4)

    def forward(self, x):
        return self.out(self.pts_linears(x))


def raw2outputs(raw, z_vals):
    dists = z_vals[..., 1:] - z_vals[..., :-1]
    dists = torch.cat([dists, torch.full_like(dists[..., :1], 1e10)], -1)
    rgb = torch.sigmoid(raw[..., :3])
    alpha = 1. - torch.exp(-F.relu(raw[..., 3]) * dists)
    T = torch.cumprod(torch.cat([torch.ones_like(alpha[..., :1]), 1. - alpha + 1e-10], -1), -1)[..., :-1]
    weights = alpha * T
    return torch.sum(weights[..., None] * rgb, -2)


def render_rays(rays_o, rays_d, img_idx, nerf, kernel, N_samples=8, near=2., far=6.):
    t_vals = torch.linspace(0., 1., N_samples)
    z_vals = (near * (1. - t_vals) + far * t_vals).expand(rays_o.shape[0], N_samples)
    pts = rays_o[..., None, :] + rays_d[..., None, :] * z_vals[..., :, None]
    warped = kernel(pts, img_idx)                  # (num_motion+1) x N_rays x N_samples x 3
    rgbs = [raw2outputs(nerf(p), z_vals) for p in warped]
    return torch.stack(rgbs, 0).mean(0)            # blurred pixel: mean of the warped renders


def train():
    torch.manual_seed(0)
    num_img, H, W = 3, 6, 6
    images = torch.rand(num_img, H * W, 3)
    rays_o = torch.zeros(num_img, H * W, 3)
    rays_d = F.normalize(torch.randn(num_img, H * W, 3), dim=-1)
    nerf = NeRF()
    kernel = RigidBlurringKernel(num_img)
    grad_vars = list(nerf.parameters()) + list(kernel.parameters())
    optimizer = torch.optim.Adam(params=grad_vars, lr=5e-4, betas=(0.9, 0.999))
    N_rand = 16
    for i in range(1, 4):
        img_i = torch.randint(num_img, (1,)).item()
        select = torch.randperm(H * W)[:N_rand]
        batch_o, batch_d = rays_o[img_i, select], rays_d[img_i, select]
        target_s = images[img_i, select]
        img_idx = torch.full((N_rand,), img_i, dtype=torch.long)
        rgb = render_rays(batch_o, batch_d, img_idx, nerf, kernel)
        optimizer.zero_grad()
        img_loss = F.mse_loss(rgb, target_s)
        loss = img_loss
        psnr = -10. * torch.log10(img_loss.detach())
        loss.backward()
        optimizer.step()
        print(f"[TRAIN] Iter: {i} Loss: {loss.item():.5f}  PSNR: {psnr.item():.3f}")


if __name__ == '__main__':
    train()
