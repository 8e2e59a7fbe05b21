# Source: https://github.com/open-mmlab/mmdetection/issues/3667
"""Freezing an MMDetection 2.x single-stage detector (issue 3667): the reporter adds
`for v in self.backbone.parameters(): v.requires_grad = False` and the same loop over
`self.bbox_head.parameters()` to SingleStageDetector.__init__. With no neck between them (SSD300 in
MMDetection 2.x has `neck=None`), no parameter of the detector requires grad any more, the summed
loss has no grad_fn, and mmcv's OptimizerHook fails at `runner.outputs['loss'].backward()`
("element 0 of tensors does not require grad and does not have a grad_fn"; the maintainers answer,
in the duplicate issue 4040, not to freeze the head). SingleStageDetector's structure, parse_losses
and the OptimizerHook/EpochBasedRunner loop follow mmdet/mmcv 2.x, trimmed; a two-level conv
backbone and an SSD-like head with dense per-anchor targets stand in for SSDVGG and SSDHead, on
random images."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class TinyVGG(nn.Module):
    def __init__(self):
        super().__init__()
        self.stage1 = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(inplace=True), nn.MaxPool2d(2))
        self.stage2 = nn.Sequential(nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(inplace=True), nn.MaxPool2d(2))

    def forward(self, x):
        c1 = self.stage1(x)
        c2 = self.stage2(c1)
        return (c1, c2)


class SSDHead(nn.Module):
    def __init__(self, num_classes=3, in_channels=(8, 16), num_anchors=2):
        super().__init__()
        self.num_classes = num_classes
        self.cls_convs = nn.ModuleList(
            [nn.Conv2d(c, num_anchors * (num_classes + 1), 3, padding=1) for c in in_channels])
        self.reg_convs = nn.ModuleList([nn.Conv2d(c, num_anchors * 4, 3, padding=1) for c in in_channels])

    def forward(self, feats):
        cls_scores = [conv(f) for conv, f in zip(self.cls_convs, feats)]
        bbox_preds = [conv(f) for conv, f in zip(self.reg_convs, feats)]
        return cls_scores, bbox_preds

    def loss(self, cls_scores, bbox_preds, gt_labels, gt_bboxes):
        losses_cls, losses_bbox = [], []
        for cls_score, bbox_pred, labels, bboxes in zip(cls_scores, bbox_preds, gt_labels, gt_bboxes):
            cls_score = cls_score.permute(0, 2, 3, 1).reshape(-1, self.num_classes + 1)
            bbox_pred = bbox_pred.permute(0, 2, 3, 1).reshape(-1, 4)
            losses_cls.append(F.cross_entropy(cls_score, labels))
            losses_bbox.append(F.smooth_l1_loss(bbox_pred, bboxes))
        return dict(loss_cls=losses_cls, loss_bbox=losses_bbox)


class SingleStageDetector(nn.Module):
    def __init__(self, backbone, neck=None, bbox_head=None):
        super(SingleStageDetector, self).__init__()
        self.backbone = backbone
        if neck is not None:
            self.neck = neck
        self.bbox_head = bbox_head

        for v in self.backbone.parameters():
            v.requires_grad = False

        for v in self.bbox_head.parameters():
            v.requires_grad = False

    @property
    def with_neck(self):
        return hasattr(self, 'neck') and self.neck is not None

    def extract_feat(self, img):
        x = self.backbone(img)
        if self.with_neck:
            x = self.neck(x)
        return x

    def forward_train(self, img, gt_labels, gt_bboxes):
        x = self.extract_feat(img)
        outs = self.bbox_head(x)
        return self.bbox_head.loss(*outs, gt_labels, gt_bboxes)

    def _parse_losses(self, losses):
        log_vars = {}
        for loss_name, loss_value in losses.items():
            if isinstance(loss_value, torch.Tensor):
                log_vars[loss_name] = loss_value.mean()
            else:
                log_vars[loss_name] = sum(_loss.mean() for _loss in loss_value)
        loss = sum(_value for _key, _value in log_vars.items() if 'loss' in _key)
        log_vars['loss'] = loss
        return loss, {k: v.item() for k, v in log_vars.items()}

    def train_step(self, data, optimizer):
        losses = self.forward_train(**data)
        loss, log_vars = self._parse_losses(losses)
        return dict(loss=loss, log_vars=log_vars, num_samples=len(data['img']))


class OptimizerHook:
    def after_train_iter(self, runner):
        runner.optimizer.zero_grad()
        runner.outputs['loss'].backward()  # expect: GG104
        runner.optimizer.step()


class EpochBasedRunner:
    def __init__(self, model, optimizer, hooks):
        self.model, self.optimizer, self.hooks = model, optimizer, hooks
        self.outputs = None

    def call_hook(self, fn_name):
        for hook in self.hooks:
            getattr(hook, fn_name)(self)

    def train(self, data_loader):
        self.model.train()
        for i, data_batch in enumerate(data_loader):
            self.outputs = self.model.train_step(data_batch, self.optimizer)
            self.call_hook('after_train_iter')
            print(i, self.outputs['log_vars'])


def random_batch(bsz=2, num_classes=3, num_anchors=2):
    img = torch.randn(bsz, 3, 16, 16)
    sizes = [8 * 8, 4 * 4]
    gt_labels = [torch.randint(0, num_classes + 1, (bsz * s * num_anchors,)) for s in sizes]
    gt_bboxes = [torch.randn(bsz * s * num_anchors, 4) for s in sizes]
    return dict(img=img, gt_labels=gt_labels, gt_bboxes=gt_bboxes)


model = SingleStageDetector(TinyVGG(), neck=None, bbox_head=SSDHead())
optimizer = torch.optim.SGD(model.parameters(), lr=2e-3, momentum=0.9, weight_decay=5e-4)
runner = EpochBasedRunner(model, optimizer, [OptimizerHook()])
runner.train([random_batch() for _ in range(2)])
