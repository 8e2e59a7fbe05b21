# Source: https://github.com/facebookresearch/pytorch3d/commit/3b5ab51de55aa47f6ca691dda19cf5907f168a4c
"""PyTorch3D `cot_laplacian` (before commit 3b5ab51d) used inside a mesh-fitting
loss so that gradients flow to the vertices.

The user deforms a source mesh towards a target point cloud (as in the
"deform a sphere" tutorial) and regularises it with a cotangent-Laplacian
energy computed from `cot_laplacian(verts, faces)` with autograd on.  Inside
`cot_laplacian` the sparse matrix `L = torch.sparse_coo_tensor(idx, cot.view(-1),
...)` is made symmetric with `L += L.t()`; `L.t()` saves L for its backward and
the in-place add then bumps L's version.  `loss.backward()` raises "one of the
variables needed for gradient computation has been modified by an inplace
operation: [torch.sparse.FloatTensor [V, V]], which is output 0 of
SparseCooTensorWithDimsAndTensors" (the exact error quoted in the commit).

The commit replaces the in-place ops (`clamp_`, `cot /= 4.0`, `L += L.t()`)
with out-of-place ones; this file applies that fix (the commit's own).
Meshes / chamfer_distance are small stand-ins.
"""
from typing import Tuple

import torch


def cot_laplacian(
    verts: torch.Tensor, faces: torch.Tensor, eps: float = 1e-12
) -> Tuple[torch.Tensor, torch.Tensor]:
    V, F = verts.shape[0], faces.shape[0]

    face_verts = verts[faces]
    v0, v1, v2 = face_verts[:, 0], face_verts[:, 1], face_verts[:, 2]

    # Side lengths of each triangle
    A = (v1 - v2).norm(dim=1)
    B = (v0 - v2).norm(dim=1)
    C = (v0 - v1).norm(dim=1)

    # Area of each triangle (with Heron's formula)
    s = 0.5 * (A + B + C)
    area = (s * (s - A) * (s - B) * (s - C)).clamp(min=eps).sqrt()

    # Compute cotangents of angles
    A2, B2, C2 = A * A, B * B, C * C
    cota = (B2 + C2 - A2) / area
    cotb = (A2 + C2 - B2) / area
    cotc = (A2 + B2 - C2) / area
    cot = torch.stack([cota, cotb, cotc], dim=1)
    cot = cot / 4.0

    ii = faces[:, [1, 2, 0]]
    jj = faces[:, [2, 0, 1]]
    idx = torch.stack([ii, jj], dim=0).view(2, F * 3)
    L = torch.sparse_coo_tensor(idx, cot.view(-1), (V, V), dtype=torch.float32)

    # Make it symmetric
    L = L + L.t()

    # For each vertex, compute the sum of areas for triangles containing it.
    idx = faces.view(-1)
    inv_areas = torch.zeros(V, dtype=torch.float32, device=verts.device)
    val = torch.stack([area] * 3, dim=1).view(-1)
    inv_areas.scatter_add_(0, idx, val)
    idx = inv_areas > 0
    inv_areas[idx] = torch.reciprocal(inv_areas[idx])
    inv_areas = inv_areas.view(-1, 1)

    return L, inv_areas


class Meshes:
    """Single-mesh stand-in for pytorch3d.structures.Meshes."""

    def __init__(self, verts, faces):
        self._verts = verts
        self._faces = faces

    def verts_packed(self):
        return self._verts

    def faces_packed(self):
        return self._faces

    def offset_verts(self, vert_offsets_packed):
        return Meshes(self._verts + vert_offsets_packed, self._faces)


def subdivide(verts, faces):
    edges = {}
    new_verts = [v for v in verts]
    new_faces = []

    def midpoint(a, b):
        key = (min(a, b), max(a, b))
        if key not in edges:
            m = (verts[a] + verts[b]) / 2
            new_verts.append(m / m.norm())
            edges[key] = len(new_verts) - 1
        return edges[key]

    for a, b, c in faces.tolist():
        ab, bc, ca = midpoint(a, b), midpoint(b, c), midpoint(c, a)
        new_faces += [[a, ab, ca], [b, bc, ab], [c, ca, bc], [ab, bc, ca]]
    return torch.stack(new_verts), torch.tensor(new_faces)


def octa_sphere(level=1):
    verts = torch.tensor([[1., 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1]])
    faces = torch.tensor([[0, 2, 4], [2, 1, 4], [1, 3, 4], [3, 0, 4],
                          [2, 0, 5], [1, 2, 5], [3, 1, 5], [0, 3, 5]])
    for _ in range(level):
        verts, faces = subdivide(verts, faces)
    return Meshes(verts, faces)


def chamfer_distance(x, y):
    d = torch.cdist(x, y)
    return d.min(dim=1)[0].pow(2).mean() + d.min(dim=0)[0].pow(2).mean()


def laplacian_energy(mesh):
    verts = mesh.verts_packed()
    faces = mesh.faces_packed()
    L, inv_areas = cot_laplacian(verts, faces)
    norm_w = torch.sparse.sum(L, dim=1).to_dense().view(-1, 1)
    lap = torch.sparse.mm(L, verts) / norm_w - verts
    return (lap.norm(dim=1) * inv_areas.view(-1)).mean()


def main():
    torch.manual_seed(0)
    src_mesh = octa_sphere(level=1)
    # target: an ellipsoid point cloud
    target = torch.randn(200, 3)
    target = target / target.norm(dim=1, keepdim=True) * torch.tensor([1.5, 0.8, 1.0])

    deform_verts = torch.full(src_mesh.verts_packed().shape, 0.0, requires_grad=True)
    optimizer = torch.optim.SGD([deform_verts], lr=0.5, momentum=0.9)
    w_chamfer, w_laplacian = 1.0, 0.1

    for i in range(20):
        optimizer.zero_grad()
        new_src_mesh = src_mesh.offset_verts(deform_verts)
        loss_chamfer = chamfer_distance(new_src_mesh.verts_packed(), target)
        loss_laplacian = laplacian_energy(new_src_mesh)
        loss = loss_chamfer * w_chamfer + loss_laplacian * w_laplacian
        loss.backward()
        optimizer.step()
    print("final loss", loss.item())


if __name__ == "__main__":
    main()
