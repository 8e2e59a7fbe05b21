# Source: https://github.com/RangiLyu/nanodet/issues/7
"""NanoDet training (GFLHead.loss) with the fix given in the thread: the three constant losses
GFLHead.loss uses when a batch has no positive anchors are created with requires_grad=True, so
Trainer.run_step's loss.backward() runs (such a batch gives the model's weights no gradient).
The backbone is a two-stage conv net, the ATSS assigner is reduced to "anchor
centre inside a ground-truth box", the regression and DFL losses to their uses of the positive
predictions, and the batch holds images whose boxes fall on no anchor; .cuda() is left out,
reduce_mean is the single-process identity."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def multi_apply(func, *args, **kwargs):
    map_results = map(lambda a: func(*a, **kwargs), zip(*args))
    return tuple(map(list, zip(*map_results)))


def reduce_mean(tensor):
    return tensor  # single process: nothing to average over


def quality_focal_loss(pred, target, beta=2.0):
    label, score = target
    pred_sigmoid = pred.sigmoid()
    scale_factor = pred_sigmoid
    zerolabel = scale_factor.new_zeros(pred.shape)
    loss = F.binary_cross_entropy_with_logits(pred, zerolabel, reduction='none') * scale_factor.pow(beta)
    bg_class_ind = pred.size(1)
    pos = torch.nonzero((label >= 0) & (label < bg_class_ind), as_tuple=False).squeeze(1)
    pos_label = label[pos].long()
    scale_factor = score[pos] - pred_sigmoid[pos, pos_label]
    loss[pos, pos_label] = F.binary_cross_entropy_with_logits(
        pred[pos, pos_label], score[pos], reduction='none') * scale_factor.abs().pow(beta)
    return loss.sum(dim=1, keepdim=False)


class GFLHead(nn.Module):
    def __init__(self, num_classes, in_channels=16, reg_max=4, strides=(8, 16)):
        super().__init__()
        self.num_classes = num_classes
        self.reg_max = reg_max
        self.anchor_strides = strides
        self.gfl_cls = nn.Conv2d(in_channels, num_classes, 3, padding=1)
        self.gfl_reg = nn.Conv2d(in_channels, 4 * (reg_max + 1), 3, padding=1)

    def forward(self, feats):
        return [self.gfl_cls(f) for f in feats], [self.gfl_reg(f) for f in feats]

    def get_anchors(self, featmap_sizes, stride_list):
        anchors = []
        for (h, w), s in zip(featmap_sizes, stride_list):
            ys, xs = torch.meshgrid(torch.arange(h), torch.arange(w), indexing='ij')
            cx, cy = (xs.reshape(-1) + 0.5) * s, (ys.reshape(-1) + 0.5) * s
            anchors.append(torch.stack([cx - 2 * s, cy - 2 * s, cx + 2 * s, cy + 2 * s], dim=1).float())
        return anchors

    def gfl_target(self, anchors, gt_bboxes, gt_labels):
        """Assign each anchor whose centre lies in a ground-truth box to that box."""
        labels = torch.full((anchors.size(0),), self.num_classes, dtype=torch.long)
        bbox_targets = torch.zeros_like(anchors)
        centers = (anchors[:, :2] + anchors[:, 2:]) / 2
        for box, label in zip(gt_bboxes, gt_labels):
            inside = ((centers >= box[:2]) & (centers <= box[2:])).all(dim=1)
            labels[inside] = label
            bbox_targets[inside] = box
        return labels, torch.ones(anchors.size(0)), bbox_targets

    def loss_single(self, anchors, cls_score, bbox_pred, labels, label_weights, bbox_targets, stride,
                    num_total_samples):
        cls_score = cls_score.permute(0, 2, 3, 1).reshape(-1, self.num_classes)
        bbox_pred = bbox_pred.permute(0, 2, 3, 1).reshape(-1, 4 * (self.reg_max + 1))
        bg_class_ind = self.num_classes
        pos_inds = torch.nonzero((labels >= 0) & (labels < bg_class_ind), as_tuple=False).squeeze(1)
        score = label_weights.new_zeros(labels.shape)

        if len(pos_inds) > 0:
            weight_targets = cls_score.detach().sigmoid()
            weight_targets = weight_targets.max(dim=1)[0][pos_inds]
            pred_corners = bbox_pred[pos_inds].reshape(-1, self.reg_max + 1).softmax(-1)
            project = torch.arange(self.reg_max + 1).float()
            pos_distances = (pred_corners @ project).reshape(-1, 4) * stride
            centers = (anchors[pos_inds, :2] + anchors[pos_inds, 2:]) / 2
            pos_decode_bbox_pred = torch.cat([centers - pos_distances[:, :2], centers + pos_distances[:, 2:]], 1)
            loss_bbox = ((pos_decode_bbox_pred - bbox_targets[pos_inds]).abs().sum(1) * weight_targets).sum() / stride
            loss_dfl = -(pred_corners.clamp(min=1e-6).log().max(dim=1)[0] * weight_targets.repeat_interleave(4)).sum() / 4.0
        else:
            loss_bbox = bbox_pred.sum() * 0
            loss_dfl = bbox_pred.sum() * 0
            weight_targets = torch.tensor(0)

        loss_qfl = quality_focal_loss(cls_score, (labels, score)).sum() / num_total_samples
        return loss_qfl, loss_bbox, loss_dfl, weight_targets.sum()

    def loss(self, preds, gt_meta):
        cls_scores, bbox_preds = preds
        featmap_sizes = [featmap.size()[-2:] for featmap in cls_scores]
        anchor_list = self.get_anchors(featmap_sizes, self.anchor_strides)
        # one image per batch here: targets per level
        targets = [self.gfl_target(a, gt_meta['gt_bboxes'][0], gt_meta['gt_labels'][0]) for a in anchor_list]
        labels_list, label_weights_list, bbox_targets_list = map(list, zip(*targets))
        num_total_pos = sum(int((l < self.num_classes).sum()) for l in labels_list)

        num_total_samples = reduce_mean(torch.tensor(num_total_pos).float()).item()
        num_total_samples = max(num_total_samples, 1.0)

        losses_qfl, losses_bbox, losses_dfl, avg_factor = multi_apply(
            self.loss_single, anchor_list, cls_scores, bbox_preds, labels_list, label_weights_list,
            bbox_targets_list, self.anchor_strides, num_total_samples=num_total_samples)

        avg_factor = sum(avg_factor)
        avg_factor = reduce_mean(avg_factor).item()
        if avg_factor <= 0:
            loss_qfl = torch.tensor(0, dtype=torch.float32, requires_grad=True)
            loss_bbox = torch.tensor(0, dtype=torch.float32, requires_grad=True)
            loss_dfl = torch.tensor(0, dtype=torch.float32, requires_grad=True)
        else:
            losses_bbox = list(map(lambda x: x / avg_factor, losses_bbox))
            losses_dfl = list(map(lambda x: x / avg_factor, losses_dfl))
            loss_qfl = sum(losses_qfl)
            loss_bbox = sum(losses_bbox)
            loss_dfl = sum(losses_dfl)

        loss = loss_qfl + loss_bbox + loss_dfl
        loss_states = dict(loss_qfl=loss_qfl, loss_bbox=loss_bbox, loss_dfl=loss_dfl)
        return loss, loss_states


class NanoDet(nn.Module):
    def __init__(self, num_classes=3):
        super().__init__()
        self.stage1 = nn.Sequential(nn.Conv2d(3, 16, 3, stride=8, padding=1), nn.BatchNorm2d(16), nn.ReLU())
        self.stage2 = nn.Sequential(nn.Conv2d(16, 16, 3, stride=2, padding=1), nn.BatchNorm2d(16), nn.ReLU())
        self.head = GFLHead(num_classes)

    def forward_train(self, gt_meta):
        x1 = self.stage1(gt_meta['img'])
        preds = self.head([x1, self.stage2(x1)])
        loss, loss_states = self.head.loss(preds, gt_meta)
        return preds, loss, loss_states


class Trainer:
    def __init__(self, model, lr=0.14, warmup_steps=3, warmup_ratio=0.1):
        self.model = model
        self.optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
        self.lr, self.warmup_steps, self.warmup_ratio = lr, warmup_steps, warmup_ratio

    def run_step(self, model, meta, mode='train'):
        output, loss, loss_dict = model.forward_train(meta)
        loss = loss.mean()
        if mode == 'train':
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
        return output, loss, loss_dict

    def get_warmup_lr(self, cur_iters):
        k = self.warmup_ratio ** (1 - cur_iters / self.warmup_steps)
        return self.lr * k

    def warm_up(self, data_loader):
        model = self.model
        model.train()
        cur_iter = 0
        while cur_iter < self.warmup_steps:
            for iter_id, batch in enumerate(data_loader):
                cur_iter += 1
                if cur_iter >= self.warmup_steps:
                    break
                lr = self.get_warmup_lr(cur_iter)
                for param_group in self.optimizer.param_groups:
                    param_group['lr'] = lr
                output, loss, loss_stats = self.run_step(model, batch)


# tiny boxes between anchor centres: no anchor is positive
data_loader = [{'img': torch.randn(1, 3, 64, 64),
                'gt_bboxes': [torch.tensor([[1.0, 1.0, 3.0, 3.0]])],
                'gt_labels': [torch.tensor([1])]} for _ in range(2)]
Trainer(NanoDet()).warm_up(data_loader)
