# Source: https://github.com/zaiweizhang/H3DNet/issues/29
"""Fixed twin of q_h3dnet_refine_relu_iadd_original_feature_bug.py. H3DNet's `ProposalModuleRefine`
added the aggregated proposal features in place to the output of `F.relu` in its refinement head
(`net += original_feature`), overwriting what ReLU saved, so the loss's backward raised. Fix (the
issue's, committed by the maintainer): `net = net + original_feature`. The pointnet2 modules, the
backbone with its primitive heads and the loss are small stand-ins written in the file.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

SURFACE_THRESH = 0.5
LINE_THRESH = 0.5
UPPER_THRESH = 100.0

# ----------------------------- stand-ins: pointnet2 modules -----------------------------


def shared_mlp(channels):
    layers = []
    for cin, cout in zip(channels[:-1], channels[1:]):
        layers += [nn.Conv1d(cin, cout, 1), nn.BatchNorm1d(cout), nn.ReLU()]
    return nn.Sequential(*layers)


class PointnetSAModuleVotes(nn.Module):
    def __init__(self, npoint, radius, nsample, mlp, use_xyz=True, normalize_xyz=True):
        super().__init__()
        self.npoint = npoint
        self.mlp = shared_mlp([mlp[0] + 3] + mlp[1:])

    def forward(self, xyz, features, inds=None):
        inds = torch.arange(self.npoint).unsqueeze(0).repeat(xyz.shape[0], 1)
        new_xyz = xyz[:, :self.npoint]
        grouped = torch.cat((new_xyz.transpose(1, 2), features[:, :, :self.npoint]), dim=1)
        return new_xyz, self.mlp(grouped), inds


class PointnetSAModuleMatch(nn.Module):
    def __init__(self, npoint, radius, nsample, mlp, use_xyz=True, normalize_xyz=True):
        super().__init__()
        self.npoint = npoint
        self.mlp = shared_mlp(mlp)

    def forward(self, xyz, features):
        return xyz[:, :self.npoint], self.mlp(features[:, :, :self.npoint]), None

# ----------------------------- models/proposal_module_refine.py (reduced) -----------------------------


def decode_scores(net, end_points, num_class, num_heading_bin, num_size_cluster, mean_size_arr, mode=''):
    net_transposed = net.transpose(2, 1)
    batch_size = net_transposed.shape[0]
    num_proposal = net_transposed.shape[1]
    start = 2
    end_points['objectness_scores' + mode] = net_transposed[:, :, 0:2]
    base_xyz = end_points['aggregated_vote_xyz' + mode]
    end_points['centerres' + mode] = net_transposed[:, :, start:start + 3]
    center = base_xyz + net_transposed[:, :, start:start + 3]
    end_points['center' + mode] = center
    end_points['heading_scores' + mode] = net_transposed[:, :, start + 3:start + 3 + num_heading_bin]
    heading_residuals_normalized = net_transposed[:, :, start + 3 + num_heading_bin:start + 3 + num_heading_bin * 2]
    end_points['heading_residuals' + mode] = heading_residuals_normalized * (np.pi / num_heading_bin)
    size_scores = net_transposed[:, :, start + 3 + num_heading_bin * 2:start + 3 + num_heading_bin * 2 + num_size_cluster]
    size_residuals_normalized = net_transposed[:, :, start + 3 + num_heading_bin * 2 + num_size_cluster:start + 3 + num_heading_bin * 2 + num_size_cluster * 4].view([batch_size, num_proposal, num_size_cluster, 3])
    end_points['size_scores' + mode] = size_scores
    end_points['size_residuals' + mode] = size_residuals_normalized * torch.from_numpy(mean_size_arr.astype(np.float32)).unsqueeze(0).unsqueeze(0)
    end_points['sem_cls_scores' + mode] = net_transposed[:, :, start + 3 + num_heading_bin * 2 + num_size_cluster * 4:]
    if mode == 'center':
        return end_points['center' + mode], end_points['size_residuals' + mode], end_points['size_scores' + mode], end_points
    return end_points


class ProposalModuleRefine(nn.Module):
    def __init__(self, num_class, num_heading_bin, num_size_cluster, mean_size_arr, num_proposal, sampling, seed_feat_dim=256):
        super().__init__()
        self.num_class, self.num_heading_bin, self.num_size_cluster = num_class, num_heading_bin, num_size_cluster
        self.mean_size_arr, self.num_proposal, self.sampling = mean_size_arr, num_proposal, sampling
        self.vote_aggregation = PointnetSAModuleVotes(npoint=num_proposal, radius=0.3, nsample=16,
                                                      mlp=[seed_feat_dim, 128, 128, 128])
        self.match_surface_center = PointnetSAModuleMatch(npoint=num_proposal * 6, radius=0.5, nsample=32, mlp=[128 + 6, 128, 64, 32])
        self.match_line_center = PointnetSAModuleMatch(npoint=num_proposal * 12, radius=0.5, nsample=32, mlp=[128 + 12, 128, 64, 32])
        out_dim = 2 + 3 + num_heading_bin * 2 + num_size_cluster * 4 + num_class
        self.conv1, self.conv2, self.conv3 = nn.Conv1d(128, 128, 1), nn.Conv1d(128, 128, 1), nn.Conv1d(128, out_dim, 1)
        self.bn1, self.bn2 = nn.BatchNorm1d(128), nn.BatchNorm1d(128)
        self.conv_match1, self.conv_match2, self.bn_match1 = nn.Conv1d(32, 32, 1), nn.Conv1d(32, 2, 1), nn.BatchNorm1d(32)
        self.conv_surface1, self.conv_surface2 = nn.Conv1d(32, 32, 1), nn.Conv1d(32, 32, 1)
        self.bn_surface1, self.bn_surface2 = nn.BatchNorm1d(32), nn.BatchNorm1d(32)
        self.conv_line1, self.conv_line2 = nn.Conv1d(32, 32, 1), nn.Conv1d(32, 32, 1)
        self.bn_line1, self.bn_line2 = nn.BatchNorm1d(32), nn.BatchNorm1d(32)
        self.conv_refine1, self.conv_refine2 = nn.Conv1d(192 * 3, 128, 1), nn.Conv1d(128, 128, 1)
        self.conv_refine3, self.conv_refine4 = nn.Conv1d(128, 128, 1), nn.Conv1d(128, out_dim, 1)
        self.bn_refine1, self.bn_refine2, self.bn_refine3 = nn.BatchNorm1d(128), nn.BatchNorm1d(128), nn.BatchNorm1d(128)
        self.softmax_normal = nn.Softmax(dim=1)

    def forward(self, xyz, features, center_z, z_feature, center_xy, xy_feature, center_line, line_feature, end_points):
        xyz, features, fps_inds = self.vote_aggregation(xyz, features)
        end_points['aggregated_vote_xyzcenter'] = xyz
        end_points['aggregated_vote_inds'] = fps_inds
        batch_size = xyz.shape[0]
        object_proposal = xyz.shape[1]

        # --------- PROPOSAL GENERATION ---------
        net = F.relu(self.bn1(self.conv1(features)))
        net = F.relu(self.bn2(self.conv2(net)))
        original_feature = features.contiguous()
        net = self.conv3(net)
        center_vote, size_vote, sizescore_vote, end_points = decode_scores(net, end_points, self.num_class, self.num_heading_bin, self.num_size_cluster, self.mean_size_arr, mode='center')

        ### surface and line centers predicted by the primitive heads
        ind_normal_z = self.softmax_normal(end_points["pred_flag_z"])
        z_sel = (ind_normal_z[:, 1, :] <= SURFACE_THRESH).detach().float()
        z_center = center_z + torch.ones_like(center_z) * UPPER_THRESH * z_sel.unsqueeze(-1)
        ind_normal_xy = self.softmax_normal(end_points["pred_flag_xy"])
        xy_sel = (ind_normal_xy[:, 1, :] <= SURFACE_THRESH).detach().float()
        xy_center = center_xy + torch.ones_like(center_xy) * UPPER_THRESH * xy_sel.unsqueeze(-1)
        surface_center_pred = torch.cat((z_center, xy_center), dim=1)
        surface_center_feature_pred = torch.cat((z_feature, xy_feature), dim=2)
        surface_center_feature_pred = torch.cat((torch.zeros((batch_size, 6, surface_center_feature_pred.shape[2])), surface_center_feature_pred), dim=1)
        ind_normal_line = self.softmax_normal(end_points["pred_flag_line"])
        line_sel = (ind_normal_line[:, 1, :] <= LINE_THRESH).detach().float()
        line_center = center_line + torch.ones_like(center_line) * UPPER_THRESH * line_sel.unsqueeze(-1)
        end_points['aggregated_vote_xyzopt'] = xyz

        ### the object proposals' own surface (6) and line (12) centers, with one-hot indicators
        obj_center = center_vote.contiguous()
        obj_surface_center = obj_center.repeat(1, 6, 1)
        obj_line_center = obj_center.repeat(1, 12, 1)
        obj_surface_indicator = torch.eye(6).repeat_interleave(object_proposal, dim=1).unsqueeze(0).repeat(batch_size, 1, 1)
        obj_line_indicator = torch.eye(12).repeat_interleave(object_proposal, dim=1).unsqueeze(0).repeat(batch_size, 1, 1)
        obj_surface_feature = torch.cat((obj_surface_indicator, original_feature.repeat(1, 1, 6)), dim=1)
        obj_line_feature = torch.cat((obj_line_indicator, original_feature.repeat(1, 1, 12)), dim=1)

        surface_xyz, surface_features, _ = self.match_surface_center(torch.cat((obj_surface_center, surface_center_pred), dim=1), torch.cat((obj_surface_feature, surface_center_feature_pred), dim=2))
        line_feature = torch.cat((torch.zeros((batch_size, 12, line_feature.shape[2])), line_feature), dim=1)
        line_xyz, line_features, _ = self.match_line_center(torch.cat((obj_line_center, line_center), dim=1), torch.cat((obj_line_feature, line_feature), dim=2))

        combine_features = torch.cat((surface_features.contiguous(), line_features.contiguous()), dim=2)
        match_features = F.relu(self.bn_match1(self.conv_match1(combine_features)))
        match_score = self.conv_match2(match_features)
        end_points["match_scores"] = match_score.transpose(2, 1).contiguous()

        surface_features = F.relu(self.bn_surface1(self.conv_surface1(surface_features)))
        surface_features = F.relu(self.bn_surface2(self.conv_surface2(surface_features)))
        line_features = F.relu(self.bn_line1(self.conv_line1(line_features)))
        line_features = F.relu(self.bn_line2(self.conv_line2(line_features)))
        surface_features = surface_features.view(batch_size, -1, 6, object_proposal).contiguous()
        line_features = line_features.view(batch_size, -1, 12, object_proposal).contiguous()

        # Combine all surface and line features
        surface_pool_feature = surface_features.view(batch_size, -1, object_proposal).contiguous()
        line_pool_feature = line_features.view(batch_size, -1, object_proposal).contiguous()
        combine_feature = torch.cat((surface_pool_feature, line_pool_feature), dim=1)

        net = F.relu(self.bn_refine1(self.conv_refine1(combine_feature)))
        net = net + original_feature
        net = F.relu(self.bn_refine2(self.conv_refine2(net)))
        net = F.relu(self.bn_refine3(self.conv_refine3(net)))
        net = self.conv_refine4(net)

        end_points = decode_scores(net, end_points, self.num_class, self.num_heading_bin, self.num_size_cluster, self.mean_size_arr, mode='opt')
        return end_points

# ----------------------------- stand-in backbone with primitive heads, loss, training loop -----------------------------


class PrimitiveBackbone(nn.Module):
    """Stand-in for H3DNet's backbone and surface/line voting heads: seeds, votes and primitive predictions."""

    def __init__(self, n_points=48, n_prim=8, seed_feat_dim=256):
        super().__init__()
        self.n_prim = n_prim
        self.seed = nn.Conv1d(3, seed_feat_dim, 1)
        self.prim = nn.Conv1d(seed_feat_dim, 128 + 3 + 2, 1)

    def forward(self, point_cloud, end_points):
        feats = F.relu(self.seed(point_cloud.transpose(1, 2)))
        prim = self.prim(feats[:, :, :self.n_prim])
        centers = point_cloud[:, :self.n_prim] + prim[:, 128:131].transpose(1, 2)
        end_points["pred_flag_z"] = end_points["pred_flag_xy"] = end_points["pred_flag_line"] = prim[:, 131:133]
        return point_cloud, feats, centers, prim[:, :128], centers, prim[:, :128], centers, prim[:, :128]


def compute_loss(end_points, gt_center):
    obj_label = torch.ones(end_points['objectness_scoresopt'].shape[:2], dtype=torch.long)
    objectness_loss = F.cross_entropy(end_points['objectness_scoresopt'].transpose(2, 1), obj_label)
    center_loss = (end_points['centeropt'] - gt_center).abs().mean()
    match_label = torch.zeros(end_points['match_scores'].shape[:2], dtype=torch.long)
    match_loss = F.cross_entropy(end_points['match_scores'].transpose(2, 1), match_label)
    return objectness_loss + center_loss + 0.5 * match_loss


torch.manual_seed(0)
mean_size_arr = np.ones((3, 3), dtype=np.float32)
backbone = PrimitiveBackbone()
refine = ProposalModuleRefine(num_class=3, num_heading_bin=4, num_size_cluster=3, mean_size_arr=mean_size_arr,
                              num_proposal=4, sampling='vote_fps')
optimizer = torch.optim.Adam(list(backbone.parameters()) + list(refine.parameters()), lr=1e-3)
for it in range(2):
    point_cloud = torch.randn(2, 48, 3)
    end_points = {}
    inputs = backbone(point_cloud, end_points)
    end_points = refine(*inputs, end_points)
    loss = compute_loss(end_points, gt_center=torch.zeros(2, 4, 3))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(it, loss.item())
