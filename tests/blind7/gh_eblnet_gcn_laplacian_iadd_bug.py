# Source: https://github.com/hehao13/EBLNet/issues/9
"""EBLNet (hehao13, network/nn/contour_point_gcn.py) trained on PyTorch 1.10: the GCN that refines
the features sampled at the most uncertain edge points adds its input to the ReLU output in place
("Laplacian smoothing", `z += x`). nn.ReLU saved that output for its backward, so the training
loss's backward fails ("... output 0 of ReluBackward0, is at version 1; expected version 0"); the
reporter traced it to that `+=`. GCN, ContourPointGCN, point sampling and the cascade step are the
repository's; a conv stem stands in for the dilated ResNet and ASPP, with tiny sizes and random
glass-segmentation batches."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def get_uncertain_point_coords_on_grid(uncertainty_map, num_points):
    R, _, H, W = uncertainty_map.shape
    num_points = min(H * W, num_points)
    point_indices = torch.topk(uncertainty_map.view(R, H * W), k=num_points, dim=1)[1]
    point_coords = torch.zeros(R, num_points, 2, dtype=torch.float, device=uncertainty_map.device)
    point_coords[:, :, 0] = point_indices % W
    point_coords[:, :, 1] = point_indices // W
    return point_indices, point_coords


def point_sample(input, point_indices, **kwargs):
    N, C, H, W = input.shape
    point_indices = point_indices.unsqueeze(1).expand(-1, C, -1)
    flatten_input = input.flatten(start_dim=2)
    sampled_feats = flatten_input.gather(dim=2, index=point_indices).view_as(point_indices)   # n c p
    return sampled_feats


class GCN(nn.Module):
    """Implementation of simple GCN operation in Glore Paper cvpr2019"""
    def __init__(self, node_num, node_fea):
        super(GCN, self).__init__()
        self.node_num = node_num
        self.node_fea = node_fea
        self.conv_adj = nn.Conv1d(self.node_num, self.node_num, kernel_size=1, bias=False)
        self.bn_adj = nn.BatchNorm1d(self.node_num)
        self.conv_wg = nn.Conv1d(self.node_fea, self.node_fea, kernel_size=1, bias=False)
        self.bn_wg = nn.BatchNorm1d(self.node_fea)
        self.relu = nn.ReLU()

    def forward(self, x):
        z = self.conv_adj(x)
        z = self.bn_adj(z)
        z = self.relu(z)

        # Laplacian smoothing
        z += x
        z = z.transpose(1, 2).contiguous()  # (b, d, n)
        z = self.conv_wg(z)
        z = self.bn_wg(z)
        z = self.relu(z)
        z = z.transpose(1, 2).contiguous()  # (b, n, d)
        return z


class ContourPointGCN(nn.Module):
    def __init__(self, inplance, num_points, thresholds=0.8):
        super(ContourPointGCN, self).__init__()
        self.num_points = num_points
        self.thresholds = thresholds
        self.gcn = GCN(num_points, inplance)

    def forward(self, x, edge):
        B, C, H, W = x.size()
        edge[edge < self.thresholds] = 0
        edge_index, point_coords = get_uncertain_point_coords_on_grid(edge, self.num_points)
        gcn_features = point_sample(x, edge_index).permute(0, 2, 1)  # b, c, n - > b, n, c
        gcn_features_reasoned = self.gcn(gcn_features)  # b, n, c
        gcn_features_reasoned = gcn_features_reasoned.permute(0, 2, 1)  # b, c, n
        edge_index = edge_index.unsqueeze(1).expand(-1, C, -1)
        final_features = x.reshape(B, C, H * W).scatter(2, edge_index, gcn_features_reasoned).view(B, C, H, W)
        return final_features


def conv_bn_relu(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, kernel_size=3, padding=1, bias=False),
                         nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class EBLNet(nn.Module):
    def __init__(self, num_classes, criterion, channels=8, num_points=6, threshold=0.85):
        super(EBLNet, self).__init__()
        self.criterion = criterion
        self.stem = conv_bn_relu(3, channels)
        self.edge_extractor = conv_bn_relu(channels, channels)
        self.refine = ContourPointGCN(channels, num_points, threshold)
        self.edge_out = nn.Conv2d(channels, 1, kernel_size=1, bias=False)
        self.body_out = nn.Conv2d(channels, num_classes, kernel_size=1, bias=False)
        self.final_seg_out_pre = conv_bn_relu(channels, channels)
        self.final_seg_out = nn.Conv2d(channels, num_classes, kernel_size=1, bias=False)

    def forward(self, x, gts=None):
        feat = self.stem(x)
        seg_edge = self.edge_extractor(feat)
        seg_body = feat - seg_edge
        seg_edge_out_pre = self.edge_out(seg_edge)
        seg_body_out = self.body_out(seg_body)
        seg_out = seg_body + seg_edge
        seg_out = self.refine(seg_out, torch.sigmoid(seg_edge_out_pre.clone().detach()))
        seg_final_out = self.final_seg_out(self.final_seg_out_pre(seg_out))
        if self.training:
            return self.criterion((seg_final_out, seg_body_out, seg_edge_out_pre), gts)
        return seg_final_out


def criterion(outputs, gts):
    seg_final_out, seg_body_out, seg_edge_out = outputs
    mask, edge = gts
    return (F.cross_entropy(seg_final_out, mask) + F.cross_entropy(seg_body_out, mask)
            + F.binary_cross_entropy_with_logits(seg_edge_out, edge))


net = EBLNet(num_classes=2, criterion=criterion)
optimizer = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
net.train()
for i in range(3):
    inputs = torch.randn(2, 3, 8, 8)
    mask = torch.randint(0, 2, (2, 8, 8))
    edge = (torch.rand(2, 1, 8, 8) > 0.8).float()
    optimizer.zero_grad()
    main_loss = net(inputs, gts=(mask, edge))
    main_loss.backward()  # expect: GG103
    optimizer.step()
    print(i, main_loss.item())
