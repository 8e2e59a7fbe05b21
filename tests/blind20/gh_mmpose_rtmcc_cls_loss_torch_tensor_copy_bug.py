# Source: https://github.com/open-mmlab/mmpose/issues/2788
"""mmpose: an RTMCC (SimCC) head extended with a classification branch ("[Bug] Add new loss can't backward").

The reporter added a class head to `RTMCCHead`: `forward` returns `pred_x, pred_y, pre_cls`, and
`loss()` builds the labels from the data samples and converts the prediction with
`pre_cls1 = torch.tensor(pre_cls, device=gt_x.device)`.  `torch.tensor(t)` copies the *data* of a
tensor into a new leaf with no history, so `pre_cls1` no longer requires grad.  With the keypoint
loss commented out (as in the report) the only loss in the dict is the cross-entropy on
`pre_cls1`; mmengine sums the dict (`parse_losses`) and the optimizer wrapper calls
`loss.backward()`, which raises "element 0 of tensors does not require grad and does not have a
grad_fn".

Fix: use the prediction itself (`self.cls_loss(pre_cls, cls_label)`); `torch.tensor(...)` is only
needed for the integer labels.  (This is the right fix; the stored thread does not show a
maintainer's code change.)
"""
import warnings
from types import SimpleNamespace

import torch
import torch.nn as nn

warnings.filterwarnings("ignore", message="To copy construct")
torch.manual_seed(0)


class KLDiscretLoss(nn.Module):
    def forward(self, pred_simcc, gt_simcc, target_weight):
        loss = 0
        for pred, gt in zip(pred_simcc, gt_simcc):
            log_pt = torch.log_softmax(pred, dim=-1)
            loss = loss + (-(gt * log_pt).sum(-1) * target_weight).mean()
        return loss


class RTMCCHead(nn.Module):
    def __init__(self, in_channels, num_keypoints, simcc_w, simcc_h, num_classes):
        super().__init__()
        self.final_layer = nn.Conv2d(in_channels, num_keypoints, 1)
        self.mlp = nn.Sequential(nn.Flatten(2), nn.Linear(16, 32), nn.SiLU())
        self.cls_x = nn.Linear(32, simcc_w)
        self.cls_y = nn.Linear(32, simcc_h)
        self.cls_head = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(in_channels, num_classes))
        self.loss_module = KLDiscretLoss()
        self.cls_loss = nn.CrossEntropyLoss()

    def forward(self, feats):
        feats = feats[-1]
        pre_cls = self.cls_head(feats)
        feats = self.final_layer(feats)
        feats = self.mlp(feats)
        pred_x = self.cls_x(feats)
        pred_y = self.cls_y(feats)
        return pred_x, pred_y, pre_cls

    def loss(self, feats, batch_data_samples, train_cfg={}):
        """Calculate losses from a batch of inputs and data samples."""
        pred_x, pred_y, pre_cls = self.forward(feats)

        gt_x = torch.cat([d.gt_instance_labels.keypoint_x_labels for d in batch_data_samples], dim=0)
        gt_y = torch.cat([d.gt_instance_labels.keypoint_y_labels for d in batch_data_samples], dim=0)

        cls_label = torch.tensor([d.gt_instances.category_id[0] for d in batch_data_samples], device=gt_x.device)

        pre_cls1 = torch.tensor(pre_cls, device=gt_x.device)

        keypoint_weights = torch.cat([d.gt_instance_labels.keypoint_weights for d in batch_data_samples], dim=0)

        pred_simcc = (pred_x, pred_y)
        gt_simcc = (gt_x, gt_y)

        # calculate losses
        losses = dict()
        # loss = self.loss_module(pred_simcc, gt_simcc, keypoint_weights)
        # losses.update(loss_kpt=loss)
        loss_cls = self.cls_loss(pre_cls1, cls_label)
        losses.update(loss_cls=loss_cls)
        return losses


class TopdownPoseEstimator(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, 2, 1), nn.SiLU(), nn.Conv2d(8, 8, 3, 2, 1), nn.SiLU())
        self.head = RTMCCHead(in_channels=8, num_keypoints=5, simcc_w=32, simcc_h=32, num_classes=3)

    def extract_feat(self, inputs):
        return (self.backbone(inputs),)

    def loss(self, inputs, data_samples):
        feats = self.extract_feat(inputs)
        return self.head.loss(feats, data_samples)

    def parse_losses(self, losses):
        log_vars = {k: v.mean() for k, v in losses.items()}
        loss = sum(v for k, v in log_vars.items() if 'loss' in k)
        return loss, log_vars

    def train_step(self, data, optim_wrapper):
        losses = self.loss(*data)
        parsed_losses, log_vars = self.parse_losses(losses)
        optim_wrapper.update_params(parsed_losses)
        return log_vars


class OptimWrapper:
    """mmengine.optim.OptimWrapper: backward, step, zero_grad."""

    def __init__(self, optimizer):
        self.optimizer = optimizer

    def update_params(self, loss):
        loss.backward()  # expect: GG104
        self.optimizer.step()
        self.optimizer.zero_grad()


def make_batch(batch_size=4):
    inputs = torch.randn(batch_size, 3, 16, 16)
    samples = []
    for _ in range(batch_size):
        samples.append(SimpleNamespace(
            gt_instance_labels=SimpleNamespace(
                keypoint_x_labels=torch.softmax(torch.randn(1, 5, 32), -1),
                keypoint_y_labels=torch.softmax(torch.randn(1, 5, 32), -1),
                keypoint_weights=torch.ones(1, 5)),
            gt_instances=SimpleNamespace(category_id=[int(torch.randint(0, 3, (1,)))])))
    return inputs, samples


if __name__ == "__main__":
    model = TopdownPoseEstimator()
    optim_wrapper = OptimWrapper(torch.optim.AdamW(model.parameters(), lr=1e-3))
    for epoch in range(2):
        for it in range(3):
            log_vars = model.train_step(make_batch(), optim_wrapper)
        print(epoch, {k: round(v.item(), 4) for k, v in log_vars.items()})
