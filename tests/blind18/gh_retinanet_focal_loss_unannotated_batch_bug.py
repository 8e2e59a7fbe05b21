# Source: https://github.com/yhenon/pytorch-retinanet/issues/144
"""yhenon/pytorch-retinanet, retinanet/losses.py `FocalLoss` before PR #145: an image without annotations
contributes `torch.tensor(0).float()` to both the classification and the regression losses, so a batch
whose images are all unannotated returns constant losses, and a training loop that backpropagates every
batch raises "element 0 of tensors does not require grad and does not have a grad_fn" at `loss.backward()`
(the issue; the repo's train.py hid it behind `if bool(loss == 0): continue` inside a try/except, skipping
what the negatives could teach). Fix (the reporter's PR #145): an unannotated image still gets the focal
loss of all its anchors as background, `focal_weight * -log(1 - classification)`, so the loss carries the
graph. The ResNet-FPN RetinaNet is a tiny conv stand-in with a fixed anchor grid; random images, CPU.
"""
import numpy as np
import torch
import torch.nn as nn


def calc_iou(a, b):
    area = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])

    iw = torch.min(torch.unsqueeze(a[:, 2], dim=1), b[:, 2]) - torch.max(torch.unsqueeze(a[:, 0], 1), b[:, 0])
    ih = torch.min(torch.unsqueeze(a[:, 3], dim=1), b[:, 3]) - torch.max(torch.unsqueeze(a[:, 1], 1), b[:, 1])

    iw = torch.clamp(iw, min=0)
    ih = torch.clamp(ih, min=0)

    ua = torch.unsqueeze((a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1]), dim=1) + area - iw * ih

    ua = torch.clamp(ua, min=1e-8)

    intersection = iw * ih

    IoU = intersection / ua

    return IoU

class FocalLoss(nn.Module):


    def forward(self, classifications, regressions, anchors, annotations):
        alpha = 0.25
        gamma = 2.0
        batch_size = classifications.shape[0]
        classification_losses = []
        regression_losses = []

        anchor = anchors[0, :, :]

        anchor_widths  = anchor[:, 2] - anchor[:, 0]
        anchor_heights = anchor[:, 3] - anchor[:, 1]
        anchor_ctr_x   = anchor[:, 0] + 0.5 * anchor_widths
        anchor_ctr_y   = anchor[:, 1] + 0.5 * anchor_heights

        for j in range(batch_size):

            classification = classifications[j, :, :]
            regression = regressions[j, :, :]

            bbox_annotation = annotations[j, :, :]
            bbox_annotation = bbox_annotation[bbox_annotation[:, 4] != -1]

            if bbox_annotation.shape[0] == 0:
                if torch.cuda.is_available():
                    regression_losses.append(torch.tensor(0).float().cuda())
                    classification_losses.append(torch.tensor(0).float().cuda())
                else:
                    regression_losses.append(torch.tensor(0).float())
                    classification_losses.append(torch.tensor(0).float())

                continue

            classification = torch.clamp(classification, 1e-4, 1.0 - 1e-4)

            IoU = calc_iou(anchors[0, :, :], bbox_annotation[:, :4]) # num_anchors x num_annotations

            IoU_max, IoU_argmax = torch.max(IoU, dim=1) # num_anchors x 1

            #import pdb
            #pdb.set_trace()

            # compute the loss for classification
            targets = torch.ones(classification.shape) * -1

            if torch.cuda.is_available():
                targets = targets.cuda()

            targets[torch.lt(IoU_max, 0.4), :] = 0

            positive_indices = torch.ge(IoU_max, 0.5)

            num_positive_anchors = positive_indices.sum()

            assigned_annotations = bbox_annotation[IoU_argmax, :]

            targets[positive_indices, :] = 0
            targets[positive_indices, assigned_annotations[positive_indices, 4].long()] = 1

            if torch.cuda.is_available():
                alpha_factor = torch.ones(targets.shape).cuda() * alpha
            else:
                alpha_factor = torch.ones(targets.shape) * alpha

            alpha_factor = torch.where(torch.eq(targets, 1.), alpha_factor, 1. - alpha_factor)
            focal_weight = torch.where(torch.eq(targets, 1.), 1. - classification, classification)
            focal_weight = alpha_factor * torch.pow(focal_weight, gamma)

            bce = -(targets * torch.log(classification) + (1.0 - targets) * torch.log(1.0 - classification))

            # cls_loss = focal_weight * torch.pow(bce, gamma)
            cls_loss = focal_weight * bce

            if torch.cuda.is_available():
                cls_loss = torch.where(torch.ne(targets, -1.0), cls_loss, torch.zeros(cls_loss.shape).cuda())
            else:
                cls_loss = torch.where(torch.ne(targets, -1.0), cls_loss, torch.zeros(cls_loss.shape))

            classification_losses.append(cls_loss.sum()/torch.clamp(num_positive_anchors.float(), min=1.0))

            # compute the loss for regression

            if positive_indices.sum() > 0:
                assigned_annotations = assigned_annotations[positive_indices, :]

                anchor_widths_pi = anchor_widths[positive_indices]
                anchor_heights_pi = anchor_heights[positive_indices]
                anchor_ctr_x_pi = anchor_ctr_x[positive_indices]
                anchor_ctr_y_pi = anchor_ctr_y[positive_indices]

                gt_widths  = assigned_annotations[:, 2] - assigned_annotations[:, 0]
                gt_heights = assigned_annotations[:, 3] - assigned_annotations[:, 1]
                gt_ctr_x   = assigned_annotations[:, 0] + 0.5 * gt_widths
                gt_ctr_y   = assigned_annotations[:, 1] + 0.5 * gt_heights

                # clip widths to 1
                gt_widths  = torch.clamp(gt_widths, min=1)
                gt_heights = torch.clamp(gt_heights, min=1)

                targets_dx = (gt_ctr_x - anchor_ctr_x_pi) / anchor_widths_pi
                targets_dy = (gt_ctr_y - anchor_ctr_y_pi) / anchor_heights_pi
                targets_dw = torch.log(gt_widths / anchor_widths_pi)
                targets_dh = torch.log(gt_heights / anchor_heights_pi)

                targets = torch.stack((targets_dx, targets_dy, targets_dw, targets_dh))
                targets = targets.t()

                if torch.cuda.is_available():
                    targets = targets/torch.Tensor([[0.1, 0.1, 0.2, 0.2]]).cuda()
                else:
                    targets = targets/torch.Tensor([[0.1, 0.1, 0.2, 0.2]])

                negative_indices = 1 + (~positive_indices)

                regression_diff = torch.abs(targets - regression[positive_indices, :])

                regression_loss = torch.where(
                    torch.le(regression_diff, 1.0 / 9.0),
                    0.5 * 9.0 * torch.pow(regression_diff, 2),
                    regression_diff - 0.5 / 9.0
                )
                regression_losses.append(regression_loss.mean())
            else:
                if torch.cuda.is_available():
                    regression_losses.append(torch.tensor(0).float().cuda())
                else:
                    regression_losses.append(torch.tensor(0).float())

        return torch.stack(classification_losses).mean(dim=0, keepdim=True), torch.stack(regression_losses).mean(dim=0, keepdim=True)

    


class TinyRetinaNet(nn.Module):
    """Stand-in for retinanet.model.resnet18: conv body, sigmoid classification and box regression heads."""
    def __init__(self, num_classes, num_anchors_per_cell=1, stride=8):
        super().__init__()
        self.num_classes = num_classes
        self.stride = stride
        self.body = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.ReLU(),
                                  nn.Conv2d(8, 8, 3, stride=2, padding=1), nn.ReLU(),
                                  nn.Conv2d(8, 8, 3, stride=2, padding=1), nn.ReLU())
        self.classificationModel = nn.Conv2d(8, num_anchors_per_cell * num_classes, 3, padding=1)
        self.regressionModel = nn.Conv2d(8, num_anchors_per_cell * 4, 3, padding=1)
        self.focalLoss = FocalLoss()

    def anchors(self, h, w):
        ys, xs = torch.meshgrid(torch.arange(h // self.stride), torch.arange(w // self.stride), indexing="ij")
        cx, cy = (xs.flatten().float() + 0.5) * self.stride, (ys.flatten().float() + 0.5) * self.stride
        size = 2.0 * self.stride
        return torch.stack([cx - size / 2, cy - size / 2, cx + size / 2, cy + size / 2], dim=1).unsqueeze(0)

    def forward(self, inputs):
        img_batch, annotations = inputs
        features = self.body(img_batch)
        b = img_batch.shape[0]
        classification = torch.sigmoid(self.classificationModel(features)).permute(0, 2, 3, 1).reshape(b, -1, self.num_classes)
        regression = self.regressionModel(features).permute(0, 2, 3, 1).reshape(b, -1, 4)
        anchors = self.anchors(img_batch.shape[2], img_batch.shape[3])
        return self.focalLoss(classification, regression, anchors, annotations)


def collater_standin(num_images, with_boxes, rng):
    """A batch as collater() builds it: images and annotations padded with -1 rows."""
    imgs = torch.rand(num_images, 3, 32, 32)
    annots = -torch.ones(num_images, 2, 5)
    if with_boxes:
        for i in range(num_images):
            x1, y1 = rng.randint(0, 16, 2)
            annots[i, 0] = torch.tensor([x1, y1, x1 + 14, y1 + 14, rng.randint(0, 3)], dtype=torch.float)
    return {'img': imgs, 'annot': annots}


rng = np.random.RandomState(0)
torch.manual_seed(0)
retinanet = TinyRetinaNet(num_classes=3)
optimizer = torch.optim.Adam(retinanet.parameters(), lr=1e-5)
dataloader_train = [collater_standin(2, True, rng), collater_standin(2, False, rng), collater_standin(2, True, rng)]

retinanet.train()
loss_hist = []
for epoch_num in range(1):
    epoch_loss = []
    for iter_num, data in enumerate(dataloader_train):
        optimizer.zero_grad()

        classification_loss, regression_loss = retinanet([data['img'].float(), data['annot']])

        classification_loss = classification_loss.mean()
        regression_loss = regression_loss.mean()

        loss = classification_loss + regression_loss

        loss.backward()  # expect: GG104

        torch.nn.utils.clip_grad_norm_(retinanet.parameters(), 0.1)

        optimizer.step()

        loss_hist.append(float(loss))
        epoch_loss.append(float(loss))
        print('Epoch: {} | Iteration: {} | Classification loss: {:1.5f} | Regression loss: {:1.5f} | Running loss: {:1.5f}'.format(
            epoch_num, iter_num, float(classification_loss), float(regression_loss), np.mean(loss_hist)))
