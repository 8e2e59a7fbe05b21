# Source: https://github.com/facebookresearch/pytorch3d/issues/644
"""https://github.com/facebookresearch/pytorch3d/issues/644
PyTorch3D's "fit a mesh via rendering" tutorial with a learnable per-axis scale added by the
reporter: `scale_xyz` (a leaf in the optimizer next to `deform_verts`) is passed through
`scale_xyz_ = torch.nn.functional.relu(scale_xyz)` once, before the optimisation loop, and every
iteration scales the deformed mesh by `scale_xyz_`. The first `sum_loss.backward()` frees that
relu node (it saved its result), so the second iteration raises "Trying to backward through the
graph a second time". The fix computes the relu inside the loop, from the current `scale_xyz`.
The issue's snippet stops before the line that applies the scale; here it multiplies the padded
vertices (`update_padded`). pytorch3d's Meshes, cameras, silhouette renderer and mesh losses and
tqdm are small stand-ins written here (a random 24-vertex mesh, 16x16 silhouettes, CPU)."""
import numpy as np
import torch
import torch.nn.functional as F

device = torch.device("cpu")
torch.manual_seed(0)
np.random.seed(0)


def tqdm(it):
    return it


# ---- stand-ins for pytorch3d.structures / renderer / loss ----
class Meshes:
    def __init__(self, verts, faces):
        self._verts = verts      # (1, V, 3)
        self._faces = faces      # (1, F, 3)

    def verts_packed(self):
        return self._verts[0]

    def verts_padded(self):
        return self._verts

    def faces_packed(self):
        return self._faces[0]

    def edges_packed(self):
        f = self._faces[0]
        e = torch.cat([f[:, [0, 1]], f[:, [1, 2]], f[:, [2, 0]]], 0)
        e, _ = e.sort(1)
        return torch.unique(e, dim=0)

    def offset_verts(self, vert_offsets_packed):
        return Meshes(self._verts + vert_offsets_packed.unsqueeze(0), self._faces)

    def update_padded(self, new_verts_padded):
        return Meshes(new_verts_padded, self._faces)

    def extend(self, n):
        return Meshes(self._verts.expand(n, -1, -1), self._faces.expand(n, -1, -1))


def mesh_edge_loss(meshes, target_length=0.0):
    verts, edges = meshes.verts_packed(), meshes.edges_packed()
    v0, v1 = verts[edges[:, 0]], verts[edges[:, 1]]
    return (((v0 - v1).norm(dim=1, p=2) - target_length) ** 2.0).mean()


def mesh_laplacian_smoothing(meshes, method="uniform"):
    verts, edges = meshes.verts_packed(), meshes.edges_packed()
    V = verts.shape[0]
    adj = torch.zeros(V, V)
    adj[edges[:, 0], edges[:, 1]] = 1.0
    adj[edges[:, 1], edges[:, 0]] = 1.0
    deg = adj.sum(1, keepdim=True).clamp(min=1.0)
    return ((adj @ verts) / deg - verts).norm(dim=1).mean()


def mesh_normal_consistency(meshes):
    verts, faces = meshes.verts_packed(), meshes.faces_packed()
    n = torch.cross(verts[faces[:, 1]] - verts[faces[:, 0]], verts[faces[:, 2]] - verts[faces[:, 0]], dim=1)
    n = F.normalize(n, dim=1)
    return (1 - (n[:-1] * n[1:]).sum(1)).mean()


class FoVOrthographicCameras:
    def __init__(self, device=None, R=None, T=None):
        self.R, self.T = R, T

    def transform_points(self, points):
        return points @ self.R[0].T + self.T[0]


class SilhouetteRenderer:
    """Soft silhouette: every projected vertex splats a Gaussian on a 16x16 grid."""

    def __init__(self, image_size=16, sigma=0.02):
        ys, xs = torch.meshgrid(torch.linspace(-1, 1, image_size), torch.linspace(-1, 1, image_size),
                                indexing="ij")
        self.grid = torch.stack([xs, ys], -1).view(-1, 2)
        self.image_size, self.sigma = image_size, sigma

    def __call__(self, meshes_world, cameras):
        p = cameras.transform_points(meshes_world.verts_packed())[:, :2]
        d2 = ((self.grid[:, None, :] - p[None, :, :]) ** 2).sum(-1)
        alpha = 1 - torch.prod(1 - torch.exp(-d2 / self.sigma) * 0.9, dim=1)
        img = torch.ones(self.image_size, self.image_size, 4)
        return torch.cat([img[..., :3], alpha.view(self.image_size, self.image_size, 1)], -1)[None]


def look_at_rotations(num_views):
    Rs = []
    for az in np.linspace(-180, 180, num_views, endpoint=False):
        a = np.deg2rad(az)
        Rs.append(torch.tensor([[np.cos(a), 0, np.sin(a)], [0, 1, 0], [-np.sin(a), 0, np.cos(a)]],
                               dtype=torch.float32))
    return torch.stack(Rs), torch.zeros(num_views, 3)


def random_mesh(n_verts=24, n_faces=40, radius=1.0, seed=0):
    g = torch.Generator().manual_seed(seed)
    verts = F.normalize(torch.randn(n_verts, 3, generator=g), dim=1) * radius
    faces = torch.stack([torch.randperm(n_verts, generator=g)[:3] for _ in range(n_faces)])
    return Meshes(verts[None], faces[None])


# ---- the tutorial, with the reporter's learnable scale ----
num_views = 4
R, T = look_at_rotations(num_views)
target_mesh = random_mesh(seed=1)
renderer_silhouette = SilhouetteRenderer()
target_cameras = [FoVOrthographicCameras(device=device, R=R[None, i, ...], T=T[None, i, ...])
                  for i in range(num_views)]
with torch.no_grad():
    target_silhouette = [renderer_silhouette(target_mesh.update_padded(target_mesh.verts_padded() * 0.8),
                                             cameras=target_cameras[i])[0, ..., 3] for i in range(num_views)]

src_mesh = random_mesh(seed=0)

losses = {"silhouette": {"weight": 1.0, "values": []},
          "edge": {"weight": 1.0, "values": []},
          "normal": {"weight": 0.01, "values": []},
          "laplacian": {"weight": 1.0, "values": []}}


def update_mesh_shape_prior_losses(mesh, loss):
    loss["edge"] = mesh_edge_loss(mesh)
    loss["normal"] = mesh_normal_consistency(mesh)
    loss["laplacian"] = mesh_laplacian_smoothing(mesh, method="uniform")


Niter = 5
num_views_per_iteration = 2

verts_shape = src_mesh.verts_packed().shape
deform_verts = torch.full(verts_shape, 0.0, device=device, requires_grad=True)

scale_xyz = torch.tensor([[1.0, 1.0, 1.0]], device=device, requires_grad=True)
scale_xyz_ = torch.nn.functional.relu(scale_xyz)

optimizer = torch.optim.SGD([deform_verts, scale_xyz], lr=1.0, momentum=0.9)

loop = tqdm(range(Niter))

for i in loop:
    optimizer.zero_grad()

    new_src_mesh = src_mesh.offset_verts(deform_verts)
    new_src_mesh = new_src_mesh.update_padded(new_src_mesh.verts_padded() * scale_xyz_)

    loss = {k: torch.tensor(0.0, device=device) for k in losses}
    update_mesh_shape_prior_losses(new_src_mesh, loss)

    for j in np.random.permutation(num_views).tolist()[:num_views_per_iteration]:
        images_predicted = renderer_silhouette(new_src_mesh, cameras=target_cameras[j])
        predicted_silhouette = images_predicted[..., 3]
        loss_silhouette = ((predicted_silhouette - target_silhouette[j]) ** 2).mean()
        loss["silhouette"] += loss_silhouette / num_views_per_iteration

    sum_loss = torch.tensor(0.0, device=device)
    for k, l in loss.items():
        sum_loss += l * losses[k]["weight"]
        losses[k]["values"].append(float(l.detach().cpu()))

    sum_loss.backward()  # expect: GG101
    optimizer.step()
print(scale_xyz.detach(), losses["silhouette"]["values"][-1])
