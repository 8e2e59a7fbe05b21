# Source: https://github.com/open-mmlab/mmcv/issues/1379
"""The mmdetection config with the maintainer's fix: GradientCumulativeOptimizerHook is the
`optimizer_config` (it replaces the plain OptimizerHook) and no custom hook repeats the backward,
so each iteration's loss is backwarded once and the optimizer steps every 4 iterations. mmcv's
runner, hook registry and hooks are small stand-ins; the detector is a tiny conv net.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

HOOKS = {}


def register_module(cls):
    HOOKS[cls.__name__] = cls
    return cls


def build_from_cfg(cfg, registry):
    args = dict(cfg)
    obj_type = args.pop('type')
    return registry[obj_type](**args)


class Hook:
    def before_run(self, runner):
        pass

    def after_train_iter(self, runner):
        pass

    def every_n_iters(self, runner, n):
        return (runner.iter + 1) % n == 0 if n > 0 else False

    def is_last_iter(self, runner):
        return runner.iter + 1 == runner.max_iters


@register_module
class OptimizerHook(Hook):
    def __init__(self, grad_clip=None):
        self.grad_clip = grad_clip

    def clip_grads(self, params):
        params = list(filter(lambda p: p.requires_grad and p.grad is not None, params))
        if len(params) > 0:
            return nn.utils.clip_grad_norm_(params, **self.grad_clip)

    def after_train_iter(self, runner):
        runner.optimizer.zero_grad()
        runner.outputs['loss'].backward()
        if self.grad_clip is not None:
            self.clip_grads(runner.model.parameters())
        runner.optimizer.step()


@register_module
class GradientCumulativeOptimizerHook(OptimizerHook):
    def __init__(self, cumulative_iters=1, **kwargs):
        super(GradientCumulativeOptimizerHook, self).__init__(**kwargs)
        assert isinstance(cumulative_iters, int) and cumulative_iters > 0
        self.cumulative_iters = cumulative_iters
        self.divisible_iters = 0
        self.remainder_iters = 0
        self.initialized = False

    def _init(self, runner):
        residual_iters = runner.max_iters - runner.iter
        self.divisible_iters = residual_iters // self.cumulative_iters * self.cumulative_iters
        self.remainder_iters = residual_iters - self.divisible_iters
        self.initialized = True

    def after_train_iter(self, runner):
        if not self.initialized:
            self._init(runner)
        if runner.iter < self.divisible_iters:
            loss_factor = self.cumulative_iters
        else:
            loss_factor = self.remainder_iters
        loss = runner.outputs['loss']
        loss = loss / loss_factor
        loss.backward()
        if (self.every_n_iters(runner, self.cumulative_iters) or self.is_last_iter(runner)):
            if self.grad_clip is not None:
                self.clip_grads(runner.model.parameters())
            runner.optimizer.step()
            runner.optimizer.zero_grad()


class EpochBasedRunner:
    def __init__(self, model, optimizer, max_epochs):
        self.model, self.optimizer = model, optimizer
        self._hooks = []
        self.max_epochs = max_epochs
        self.iter = 0
        self.max_iters = None
        self.outputs = None

    def register_hook(self, hook, priority=50):
        hook.priority = priority
        inserted = False
        for i in range(len(self._hooks) - 1, -1, -1):
            if priority >= self._hooks[i].priority:
                self._hooks.insert(i + 1, hook)
                inserted = True
                break
        if not inserted:
            self._hooks.insert(0, hook)

    def register_optimizer_hook(self, optimizer_config):
        if optimizer_config is None:
            return
        if isinstance(optimizer_config, dict):
            optimizer_config.setdefault('type', 'OptimizerHook')
            hook = build_from_cfg(optimizer_config, HOOKS)
        else:
            hook = optimizer_config
        self.register_hook(hook, priority=10)  # 'ABOVE_NORMAL' runs before 'NORMAL' hooks

    def register_custom_hooks(self, custom_config):
        for item in custom_config or []:
            item = dict(item)
            priority = item.pop('priority', 50)
            self.register_hook(build_from_cfg(item, HOOKS), priority=priority)

    def register_training_hooks(self, optimizer_config=None, custom_hooks_config=None):
        self.register_optimizer_hook(optimizer_config)
        self.register_custom_hooks(custom_hooks_config)

    def call_hook(self, fn_name):
        for hook in self._hooks:
            getattr(hook, fn_name)(self)

    def run(self, data_loader):
        self.max_iters = self.max_epochs * len(data_loader)
        self.call_hook('before_run')
        for epoch in range(self.max_epochs):
            self.model.train()
            for i, data_batch in enumerate(data_loader):
                self.outputs = self.model.train_step(data_batch, self.optimizer)
                self.call_hook('after_train_iter')
                self.iter += 1


class TinyDetector(nn.Module):
    def __init__(self, num_classes=3):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.BatchNorm2d(8), nn.ReLU(),
                                      nn.Conv2d(8, 8, 3, stride=2, padding=1), nn.ReLU())
        self.cls_head = nn.Conv2d(8, num_classes, 1)
        self.reg_head = nn.Conv2d(8, 4, 1)

    def forward_train(self, img, gt_labels, gt_bboxes):
        feat = self.backbone(img)
        loss_cls = F.cross_entropy(self.cls_head(feat), gt_labels)
        loss_bbox = F.l1_loss(self.reg_head(feat), gt_bboxes)
        return dict(loss_cls=loss_cls, loss_bbox=loss_bbox)

    def _parse_losses(self, losses):
        loss = sum(v for k, v in losses.items() if 'loss' in k)
        log_vars = {k: v.item() for k, v in losses.items()}
        return loss, log_vars

    def train_step(self, data, optimizer):
        losses = self.forward_train(**data)
        loss, log_vars = self._parse_losses(losses)
        return dict(loss=loss, log_vars=log_vars, num_samples=len(data['img']))


# the user's config overrides configs/_base_/schedules/schedule_1x.py's optimizer_config
optimizer_config = dict(type="GradientCumulativeOptimizerHook", cumulative_iters=4)
custom_hooks = []

model = TinyDetector()
optimizer = torch.optim.SGD(model.parameters(), lr=0.02, momentum=0.9, weight_decay=1e-4)
data_loader = [dict(img=torch.randn(2, 3, 16, 16), gt_labels=torch.randint(0, 3, (2, 4, 4)),
                    gt_bboxes=torch.randn(2, 4, 4, 4)) for _ in range(8)]
runner = EpochBasedRunner(model, optimizer, max_epochs=1)
runner.register_training_hooks(optimizer_config, custom_hooks_config=custom_hooks)
runner.run(data_loader)
