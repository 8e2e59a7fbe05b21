# Source: https://github.com/open-mmlab/mmdetection/issues/3667
"""mmdetection's SingleStageDetector freezing the backbone only, as the maintainers answer in the
duplicate issue 4040 (a frozen head leaves nothing to train in front of it here): the SSD head
keeps requires_grad, the losses have a grad_fn, and OptimizerHook's backward and step train it."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class SSDVGG(nn.Module):
    """A VGG trunk and one extra stride-2 layer, returning two feature levels."""

    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(inplace=True),
                                      nn.MaxPool2d(2), nn.Conv2d(8, 16, 3, padding=1),
                                      nn.ReLU(inplace=True))
        self.extra = nn.Sequential(nn.Conv2d(16, 16, 3, stride=2, padding=1), nn.ReLU(inplace=True))

    def forward(self, x):
        x = self.features(x)
        return (x, self.extra(x))


class SSDHead(nn.Module):
    def __init__(self, num_classes=3, in_channels=(16, 16), num_anchors=2):
        super().__init__()
        self.num_classes = num_classes
        self.cls_convs = nn.ModuleList(
            [nn.Conv2d(c, num_anchors * (num_classes + 1), 3, padding=1) for c in in_channels])
        self.reg_convs = nn.ModuleList([nn.Conv2d(c, num_anchors * 4, 3, padding=1) for c in in_channels])

    def forward(self, feats):
        cls_scores, bbox_preds = [], []
        for feat, reg_conv, cls_conv in zip(feats, self.reg_convs, self.cls_convs):
            cls_scores.append(cls_conv(feat))
            bbox_preds.append(reg_conv(feat))
        return cls_scores, bbox_preds

    def loss(self, cls_scores, bbox_preds, labels, bbox_targets):
        num_images = cls_scores[0].size(0)
        all_cls = torch.cat([s.permute(0, 2, 3, 1).reshape(num_images, -1, self.num_classes + 1)
                             for s in cls_scores], 1)
        all_bbox = torch.cat([b.permute(0, 2, 3, 1).reshape(num_images, -1, 4) for b in bbox_preds], 1)
        loss_cls = F.cross_entropy(all_cls.reshape(-1, self.num_classes + 1), labels.reshape(-1))
        pos = labels.reshape(-1) > 0
        loss_bbox = F.smooth_l1_loss(all_bbox.reshape(-1, 4)[pos], bbox_targets.reshape(-1, 4)[pos])
        return dict(loss_cls=loss_cls, loss_bbox=loss_bbox)


class SingleStageDetector(nn.Module):
    def __init__(self, backbone, neck=None, bbox_head=None):
        super(SingleStageDetector, self).__init__()
        self.backbone = backbone
        if neck is not None:
            self.neck = neck
        self.bbox_head = bbox_head

        for v in self.backbone.parameters():
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
        loss = sum(_value for _key, _value in losses.items() if 'loss' in _key)
        log_vars = {k: v.item() for k, v in losses.items()}
        return loss, log_vars

    def train_step(self, data, optimizer):
        losses = self.forward_train(**data)
        loss, log_vars = self._parse_losses(losses)
        return dict(loss=loss, log_vars=log_vars, num_samples=len(data['img']))


class OptimizerHook:
    def after_train_iter(self, runner):
        runner.optimizer.zero_grad()
        runner.outputs['loss'].backward()
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


def data_loader(n, batch_size=2):
    num_anchors = 2 * (8 * 8 + 4 * 4)  # two anchors a place on the 8x8 and 4x4 levels
    return [dict(img=torch.randn(batch_size, 3, 16, 16),
                 gt_labels=torch.randint(0, 4, (batch_size, num_anchors)),
                 gt_bboxes=torch.randn(batch_size, num_anchors, 4)) for _ in range(n)]


model = SingleStageDetector(SSDVGG(), neck=None, bbox_head=SSDHead())
optimizer = torch.optim.SGD(model.parameters(), lr=0.002, momentum=0.9, weight_decay=5e-4)
runner = EpochBasedRunner(model, optimizer, [OptimizerHook()])
runner.train(data_loader(2))
