# Source: https://github.com/Jiahao-UTS/DSLPT/issues/2
"""DSLPT (face alignment) trained on two GPUs: the model's forward returns its three stage losses
(each a 0-d `torch.mean` of the Gaussian negative log-likelihood), `torch.nn.DataParallel` gathers
each of them from the replicas into a vector with one entry per GPU, so `loss = 0.2 * R_loss_1 +
0.3 * R_loss_2 + 0.5 * R_loss_3` has two elements and `loss.backward()` raises "grad can be
implicitly created only for scalar outputs". The maintainer only answered that the code was tested
on one GPU; the right fix, in the `_ok` twin: average the gathered losses. DataParallel (split the
batch over `device_ids`, gather the outputs, unsqueezing 0-d ones), the backbone, ROI sampler and
Transformer are small CPU stand-ins written in the file (the three unrolled stages call one helper).
"""
import logging
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

logger = logging.getLogger(__name__)


class DataParallel(nn.Module):
    """CPU stand-in for torch.nn.DataParallel over `device_ids` replicas."""

    def __init__(self, module, device_ids):
        super().__init__()
        self.module, self.device_ids = module, device_ids

    def forward(self, *inputs):
        chunks = [x.chunk(len(self.device_ids)) if torch.is_tensor(x) else [x] * len(self.device_ids)
                  for x in inputs]
        outputs = [self.module(*args) for args in zip(*chunks)]
        return self.gather(outputs)

    def gather(self, outputs):
        first = outputs[0]
        if torch.is_tensor(first):
            if first.dim() == 0:
                return torch.stack(outputs)
            return torch.cat(outputs, 0)
        return type(first)(self.gather(list(parts)) for parts in zip(*outputs))


class get_roi(nn.Module):
    def __init__(self, num_points):
        super().__init__()
        self.num_points = num_points
        grid = torch.linspace(-0.5, 0.5, num_points)
        self.register_buffer("grid", torch.stack(torch.meshgrid(grid, grid, indexing="xy"), -1).view(1, 1, -1, 2))

    def forward(self, anchor, scale):
        bbox_size = scale * 2
        start_anchor = anchor - scale
        roi = anchor.unsqueeze(2) + self.grid * bbox_size.unsqueeze(2)
        return roi, bbox_size, start_anchor


class interpolation_layer(nn.Module):
    def __init__(self, num_point):
        super().__init__()
        self.num_point = num_point

    def forward(self, feature_map, points):
        grid = (points * 2 - 1).unsqueeze(1)
        return F.grid_sample(feature_map, grid, align_corners=False).squeeze(2).permute(0, 2, 1)


class Transformer(nn.Module):
    def __init__(self, num_point, d_model, nhead, num_decoder, feedforward_dim, dropout=0.1):
        super().__init__()
        self.layers = nn.ModuleList([nn.TransformerEncoderLayer(d_model, nhead, feedforward_dim, dropout,
                                                                batch_first=True) for _ in range(num_decoder)])

    def forward(self, x):
        outputs = []
        for layer in self.layers:
            x = layer(x)
            outputs.append(x)
        return torch.stack(outputs, 1)


def get_face_alignment_net(cfg):
    return nn.Sequential(nn.Conv2d(3, cfg.MODEL.OUT_DIM, 3, stride=2, padding=1), nn.ReLU(),
                         nn.Conv2d(cfg.MODEL.OUT_DIM, cfg.MODEL.OUT_DIM, 3, stride=2, padding=1))


class Dynamic_sparse_alignment_network(nn.Module):
    def __init__(self, num_point, d_model, nhead, feedforward_dim, cfg):
        super(Dynamic_sparse_alignment_network, self).__init__()
        self.num_point = num_point
        self.d_model = d_model
        self.initial_points = torch.rand(1, num_point, 2) * 0.5 + 0.25
        self.initial_scale = torch.tensor([[[0.125, 0.125]]], dtype=torch.float32).repeat(1, num_point, 1)
        self.Sample_num = cfg.MODEL.SAMPLE_NUM
        self.ROI = get_roi(self.Sample_num)
        self.interpolation = interpolation_layer(num_point)
        self.feature_extractor = nn.Conv2d(d_model, d_model, kernel_size=self.Sample_num, bias=True)
        self.Transformer = Transformer(num_point, d_model, nhead, cfg.TRANSFORMER.NUM_DECODER, feedforward_dim, dropout=0.1)
        self.embedding_layer = nn.Linear(d_model, 2 * d_model)
        self.out_mean_layer = nn.Linear(2 * d_model, 2)
        self.out_std_layer = nn.Linear(2 * d_model, 2)
        self.backbone = get_face_alignment_net(cfg)

    def Gaussian_loss(self, mean, std, ground_truth):
        loss1 = torch.exp(- (mean - ground_truth) ** 2.0 / std / 2.0) / torch.sqrt(2.0 * np.pi * std)
        loss1 = -torch.log(loss1 + 1e-9)
        return torch.mean(loss1)

    def stage(self, feature_map, anchors, bbox_scale):
        bs = feature_map.size(0)
        ROI_anchor, bbox_size, start_anchor = self.ROI(anchors.detach(), bbox_scale)
        ROI_anchor = ROI_anchor.view(bs, self.num_point * self.Sample_num * self.Sample_num, 2)
        ROI_feature = self.interpolation(feature_map, ROI_anchor.detach()).reshape(
            bs * self.num_point, self.Sample_num, self.Sample_num, self.d_model).permute(0, 3, 2, 1)
        transformer_feature = self.feature_extractor(ROI_feature).view(bs, self.num_point, self.d_model)
        offset = self.Transformer(transformer_feature)
        offset = F.relu(self.embedding_layer(offset))
        offset_mean = self.out_mean_layer(offset)
        offset_std = 1 / (1 + torch.exp(-self.out_std_layer(offset)))
        landmarks = start_anchor.unsqueeze(1) + bbox_size.unsqueeze(1) * offset_mean
        return landmarks, offset_mean, offset_std, start_anchor, bbox_size

    def forward(self, image, ground_truth=None, is_train=False):
        bs = image.size(0)
        output_list = []
        feature_map = self.backbone(image)
        initial_landmarks = self.initial_points.repeat(bs, 1, 1)
        bbox_scale_1 = self.initial_scale.repeat(bs, 1, 1)

        landmarks_1, offset_mean_1, offset_std_1, start_anchor_1, bbox_size_1 = self.stage(
            feature_map, initial_landmarks, bbox_scale_1)
        output_list.append(landmarks_1)
        if is_train:
            ground_truth_1 = ((ground_truth - start_anchor_1) / bbox_size_1).unsqueeze(1)
            loss1 = self.Gaussian_loss(offset_mean_1, offset_std_1, ground_truth_1)

        bbox_scale_2 = bbox_scale_1 * torch.clamp(
            torch.max(offset_std_1[:, -1, :, :].detach() * 12, dim=2, keepdim=True)[0], 0.5, 0.7)
        landmarks_2, offset_mean_2, offset_std_2, start_anchor_2, bbox_size_2 = self.stage(
            feature_map, landmarks_1[:, -1, :, :], bbox_scale_2)
        output_list.append(landmarks_2)
        if is_train:
            ground_truth_2 = ((ground_truth - start_anchor_2) / bbox_size_2).unsqueeze(1)
            loss2 = self.Gaussian_loss(offset_mean_2, offset_std_2, ground_truth_2)

        bbox_scale_3 = bbox_scale_2 * torch.clamp(
            torch.max(offset_std_2[:, -1, :, :].detach() * 12, dim=2, keepdim=True)[0], 0.5, 0.7)
        landmarks_3, offset_mean_3, offset_std_3, start_anchor_3, bbox_size_3 = self.stage(
            feature_map, landmarks_2[:, -1, :, :], bbox_scale_3)
        output_list.append(landmarks_3)
        if is_train:
            ground_truth_3 = ((ground_truth - start_anchor_3) / bbox_size_3).unsqueeze(1)
            loss3 = self.Gaussian_loss(offset_mean_3, offset_std_3, ground_truth_3)

        if is_train:
            return output_list, [loss1, loss2, loss3]
        else:
            return output_list, [offset_std_1, offset_std_2, offset_std_3], start_anchor_3, bbox_size_3


class AverageMeter(object):
    def __init__(self):
        self.val, self.avg, self.sum, self.count = 0, 0, 0, 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


def train(config, train_loader, model, optimizer, epoch):
    batch_time = AverageMeter()
    NME_stage1 = AverageMeter()
    NME_stage2 = AverageMeter()
    NME_stage3 = AverageMeter()
    loss_average = AverageMeter()

    model.train()
    end = time.time()

    for i, (input, meta) in enumerate(train_loader):
        ground_truth = meta['Points'].float()

        landmarks, loss_list = model(input, ground_truth, True)

        R_loss_1 = loss_list[0]
        R_loss_2 = loss_list[1]
        R_loss_3 = loss_list[2]

        loss = 0.2 * R_loss_1 + 0.3 * R_loss_2 + 0.5 * R_loss_3

        optimizer.zero_grad()
        loss.backward()  # expect: GG105
        optimizer.step()

        NME_stage1.update(R_loss_1.item(), input.size(0))
        NME_stage2.update(R_loss_2.item(), input.size(0))
        NME_stage3.update(R_loss_3.item(), input.size(0))
        loss_average.update(loss.item(), input.size(0))

        batch_time.update(time.time() - end)
        end = time.time()
        if i % config.PRINT_FREQ == 0:
            logger.info('Epoch: [%d][%d] Loss %.5f', epoch, i, loss_average.val)


class Cfg:
    class MODEL:
        OUT_DIM = 16
        SAMPLE_NUM = 3

    class TRANSFORMER:
        NHEAD = 2
        FEED_DIM = 32
        NUM_DECODER = 2

    class WFLW:
        NUM_POINT = 5

    GPUS = [0, 1]
    PRINT_FREQ = 1

    class TRAIN:
        BATCH_SIZE_PER_GPU = 2


cfg = Cfg()
torch.manual_seed(0)
model = Dynamic_sparse_alignment_network(cfg.WFLW.NUM_POINT, cfg.MODEL.OUT_DIM, cfg.TRANSFORMER.NHEAD,
                                         cfg.TRANSFORMER.FEED_DIM, cfg)
model = DataParallel(model, device_ids=cfg.GPUS)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)

batch_size = cfg.TRAIN.BATCH_SIZE_PER_GPU * len(cfg.GPUS)
train_loader = [(torch.randn(batch_size, 3, 32, 32), {'Points': torch.rand(batch_size, cfg.WFLW.NUM_POINT, 2)})
                for _ in range(2)]

for epoch in range(2):
    train(cfg, train_loader, model, optimizer, epoch)
