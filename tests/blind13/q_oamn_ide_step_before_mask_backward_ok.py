# Source: https://github.com/PeixianChen/OAMN/issues/1
"""Fixed twin of q_oamn_ide_step_before_mask_backward_bug.py. OAMN's trainer backwarded the identity
loss with `retain_graph=True`, stepped the TaskNet's optimizer, then backwarded `loss_mask` (which
contains that loss) through the same graph, whose TaskNet weights the step had rewritten in place
(GG103). The report got no answer; the right fix, applied here: both gradients are taken before
either step, each restricted to its own network with `inputs=` (the TaskNet gets d loss, the MaskNet
d loss_mask, as the original order intended), then both optimizers step. ResNet-50, the MaskNet, the
triplet loss and the DukeMTMC loader are small stand-ins; `.cuda()` calls are dropped.
"""
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

# ----------------------------- reid/models (stand-ins) -----------------------------


class TaskNet(nn.Module):
    def __init__(self, num_features=32, num_classes=7):
        super().__init__()
        self.base = nn.Sequential(nn.Conv2d(3, 16, 3, 2, 1), nn.BatchNorm2d(16), nn.ReLU(), nn.Conv2d(16, 16, 3, 1, 1), nn.ReLU())
        self.feat = nn.Linear(16, num_features)
        self.feat_bn = nn.BatchNorm1d(num_features)
        self.classifier = nn.Linear(num_features, num_classes, bias=False)

    def forward(self, x, types="encoder", drop=False):
        if types == "encoder":
            return self.base(x)
        pooled = F.adaptive_avg_pool2d(x, 1).flatten(1)
        triplet_feature = self.feat(pooled)
        all_feature = self.feat_bn(triplet_feature)
        return self.classifier(F.relu(all_feature)), triplet_feature, all_feature


class MaskNet(nn.Module):
    def __init__(self, channels=16):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(channels, 8, 3, 1, 1), nn.ReLU(), nn.Conv2d(8, 1, 1))
        self.score = nn.Linear(channels, 4)

    def forward(self, f):
        mask = torch.sigmoid(self.conv(f))
        score = self.score(F.adaptive_avg_pool2d(f, 1).flatten(1))
        return mask, score


class TripletLoss(nn.Module):
    def __init__(self, margin=0.3):
        super().__init__()
        self.ranking_loss = nn.MarginRankingLoss(margin=margin)

    def forward(self, inputs, targets):
        dist = torch.cdist(inputs, inputs)
        mask = targets.expand(len(targets), len(targets)).eq(targets.expand(len(targets), len(targets)).t())
        dist_ap = torch.stack([dist[i][mask[i]].max() for i in range(len(targets))])
        dist_an = torch.stack([dist[i][mask[i] == 0].min() for i in range(len(targets))])
        return self.ranking_loss(dist_an, dist_ap, torch.ones_like(dist_an))


class AverageMeter(object):
    def __init__(self):
        self.val = self.avg = self.sum = self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count

# ----------------------------- reid/trainers.py -----------------------------


class BaseTrainer(object):
    def __init__(self, model, criterion, InvNet=None):
        super(BaseTrainer, self).__init__()
        self.MaskNet, self.TaskNet = model
        self.criterion = criterion
        self.device = torch.device("cpu")

    def train(self, epoch, data_loader, optimizer, batch_size, print_freq=1):
        self.MaskNet.train()
        self.TaskNet.train()

        optimizer_Mask, optimizer_Ide = optimizer

        batch_time = AverageMeter()
        losses_IDE_s = AverageMeter()
        losses_Tri = AverageMeter()
        losses_Mask1 = AverageMeter()
        losses_Mask3 = AverageMeter()
        losses_Score = AverageMeter()

        train_loader = data_loader[0]
        end = time.time()

        for i, src_inputs in enumerate(train_loader):

            inputs, pids, pids_tri, masksize = self._parse_data(src_inputs)

            loss_ce, loss_tri, loss_mask1, loss_mask3, loss_score = self._forward(inputs, pids, pids_tri, masksize, epoch)

            loss = loss_ce + 0.5 * loss_tri
            loss_mask = loss + 5 * (loss_mask1 + loss_mask3) + 1 * loss_score
            optimizer_Ide.zero_grad()
            optimizer_Mask.zero_grad()
            loss.backward(retain_graph=True, inputs=list(self.TaskNet.parameters()))
            loss_mask.backward(inputs=list(self.MaskNet.parameters()))
            optimizer_Ide.step()
            optimizer_Mask.step()


            losses_IDE_s.update(loss_ce.item(), pids.size(0) * 4)
            losses_Tri.update(loss_tri.item(), pids.size(0) * 4)
            losses_Mask1.update(loss_mask1.item(), pids.size(0) * 4)
            losses_Mask3.update(loss_mask3.item(), pids.size(0) * 4)
            losses_Score.update(loss_score.item(), pids.size(0) * 4)

            batch_time.update(time.time() - end)
            end = time.time()

            if (i + 1) % print_freq == 0:
                print('Epoch: [{}][{}/{}]\ttask_1 {:.3f}\ttri {:.3f}\tmask1 {:.3f}\tmask3 {:.3f}\tscore {:.3f}'.format(
                    epoch, i + 1, len(train_loader), losses_IDE_s.val, losses_Tri.val, losses_Mask1.val,
                    losses_Mask3.val, losses_Score.val))


class Trainer(BaseTrainer):
    def _parse_data(self, inputs):
        imgs, _, pids, _, pindexs, masksize = inputs
        inputs = imgs.to(self.device)
        inputs = inputs.reshape(inputs.shape[0]*inputs.shape[1], inputs.shape[2], inputs.shape[3], inputs.shape[4])
        pids = pids.to(self.device)
        pids_tri = pids.clone()
        pids = pids.unsqueeze(1).repeat(1, 5).view(-1)

        masksize = masksize.to(self.device)
        masksize[(128*256)//masksize == 2] = 1
        masksize[masksize != 1] = 0
        return inputs, pids, pids_tri, masksize

    def _forward(self, inputs, pids, pids_tri, masksize, epoch, update_only=False):
        f1 = self.TaskNet(inputs, types="encoder", drop=False)
        mask, score = self.MaskNet(f1.detach())
        outputs_source, triplet_feature, all_feature = self.TaskNet(f1 * mask, types="tasknet")
        loss_ce = self.criterion[0](outputs_source, pids)

        triplet_feature = triplet_feature.reshape(triplet_feature.shape[0]//5, 5, triplet_feature.shape[1])
        loss_tri = sum(self.criterion[1](triplet_feature[:, k, :], pids_tri) for k in range(5)) / 5

        f1 = f1.reshape(f1.shape[0]//5, 5, f1.shape[1], f1.shape[2], f1.shape[3])
        f1_h, f1_l, f1_r, f1_d, f1_u = (f1[:, k, :, :, :] for k in range(5))

        mask = mask.reshape(mask.shape[0]//5, 5, mask.shape[1], mask.shape[2], mask.shape[3])
        mask_h, mask_l, mask_r, mask_d, mask_u = (mask[:, k, :, :, :] for k in range(5))

        f1_h_h, f1_h_d, f1_h_u, f1_h_l, f1_h_r = f1_h * mask_h, f1_h * mask_d, f1_h * mask_u, f1_h * mask_l, f1_h * mask_r
        f1_d_d, f1_u_u, f1_l_l, f1_r_r = f1_d * mask_d, f1_u * mask_u, f1_l * mask_l, f1_r * mask_r

        loss_mask1 = self.criterion[2](f1_h_l, f1_l_l) + self.criterion[2](f1_h_r, f1_r_r) + self.criterion[2](f1_h_d, f1_d_d) + self.criterion[2](f1_h_u, f1_u_u)
        masksize = masksize.unsqueeze(1).unsqueeze(2).unsqueeze(3)
        loss_mask3 = self.criterion[2]((f1_l_l + f1_r_r) * masksize, f1_h_h * masksize) + self.criterion[2]((f1_u_u + f1_d_d) * masksize, f1_h_h * masksize)

        score = score.reshape(score.shape[0]//5, 5, score.shape[1])
        score_h = torch.max(F.softmax(score[:, 0, :].clone(), dim=1), dim=1)[0]
        score_l = F.softmax(score[:, 1, :].clone(), dim=1)[:, 0]
        score_r = F.softmax(score[:, 2, :].clone(), dim=1)[:, 1]
        score_d = F.softmax(score[:, 3, :].clone(), dim=1)[:, 2]
        score_u = F.softmax(score[:, 4, :].clone(), dim=1)[:, 3]

        masksize = masksize.squeeze(-1).squeeze(-1).squeeze(-1)
        id_h = torch.zeros(score_h.shape) + 0.25
        id_l = (torch.zeros(score_l.shape) + 1) * masksize + (torch.zeros(score_l.shape)) * (1-masksize)
        id_r = (torch.zeros(score_r.shape) + 1) * masksize + (torch.zeros(score_r.shape)) * (1-masksize)
        id_d = (torch.zeros(score_d.shape) + 1) * masksize + (torch.zeros(score_d.shape) + 0.5) * (1-masksize)
        id_u = (torch.zeros(score_u.shape) + 1) * masksize + (torch.zeros(score_u.shape) + 0.5) * (1-masksize)

        loss_score = self.criterion[2](score_h, id_h) + self.criterion[2](score_l, id_l) + self.criterion[2](score_r, id_r) + self.criterion[2](score_d, id_d) + self.criterion[2](score_u, id_u)
        return loss_ce, loss_tri, loss_mask1, loss_mask3, loss_score

# ----------------------------- train_oamn.py -----------------------------


def main():
    torch.manual_seed(1)
    num_classes = 7
    masknet, tasknet = MaskNet(), TaskNet(num_features=32, num_classes=num_classes)

    criterion = []
    criterion.append(nn.CrossEntropyLoss())
    criterion.append(TripletLoss(margin=0.3))
    criterion.append(nn.MSELoss())

    param_groups = [{'params': masknet.parameters(), 'lr_mult': 0.1}]
    optimizer_Mask = torch.optim.SGD(param_groups, lr=0.01, momentum=0.9, weight_decay=5e-4, nesterov=True)
    base_param_ids = set(map(id, tasknet.base.parameters()))
    new_params = [p for p in tasknet.parameters() if id(p) not in base_param_ids]
    param_groups = [{'params': tasknet.base.parameters(), 'lr_mult': 0.1},
                    {'params': new_params, 'lr_mult': 1.0}]
    optimizer_Ide = torch.optim.SGD(param_groups, lr=0.01, momentum=0.9, weight_decay=5e-4, nesterov=True)

    trainer = Trainer([masknet, tasknet], criterion)

    # DukeMTMC stand-in: (imgs [B, 5 views, 3, H, W], fname, pid, camid, index, visible mask size)
    B = 4
    source_train_loader = [(torch.randn(B, 5, 3, 16, 8), None, torch.tensor([0, 0, 1, 1]), None, None,
                            torch.tensor([128 * 256 // 2, 128 * 256, 128 * 256 // 2, 128 * 256])) for _ in range(2)]
    for epoch in range(1):
        trainer.train(epoch, [source_train_loader], [optimizer_Mask, optimizer_Ide], B)


if __name__ == '__main__':
    main()
