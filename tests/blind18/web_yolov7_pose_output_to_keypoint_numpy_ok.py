# Source: https://github.com/WongKinYiu/yolov7/commit/13594cf
"""YOLOv7 pose (tools/keypoint.ipynb before PR #333): the model runs on the image with grad on,
`non_max_suppression_kpt` keeps the detections, and `utils.plots.output_to_keypoint` converts each image's
detections to numpy, and the detections require grad. Fixed as the PR does: `o.detach().cpu().numpy()`
and `kpts.detach().cpu().numpy()`.
The pose model and the NMS are small stand-ins written here (17 keypoints, one class); random image, CPU.
"""
import numpy as np
import torch
import torch.nn as nn


def xyxy2xywh(x):
    # Convert nx4 boxes from [x1, y1, x2, y2] to [x, y, w, h] where xy1=top-left, xy2=bottom-right
    y = x.clone() if isinstance(x, torch.Tensor) else np.copy(x)
    y[:, 0] = (x[:, 0] + x[:, 2]) / 2  # x center
    y[:, 1] = (x[:, 1] + x[:, 3]) / 2  # y center
    y[:, 2] = x[:, 2] - x[:, 0]  # width
    y[:, 3] = x[:, 3] - x[:, 1]  # height
    return y


def xywh2xyxy(x):
    return torch.cat([x[:, :2] - x[:, 2:4] / 2, x[:, :2] + x[:, 2:4] / 2], 1)


class TinyPoseModel(nn.Module):
    """Stand-in for the yolov7-w6-pose model: per anchor [x, y, w, h, obj, cls, 17 * (x, y, conf)]."""

    def __init__(self, nc=1, nkpt=17, anchors=32):
        super().__init__()
        self.yaml = {'nc': nc, 'nkpt': nkpt}
        self.anchors = anchors
        self.no = 5 + nc + 3 * nkpt
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.SiLU(), nn.AdaptiveAvgPool2d(4))
        self.head = nn.Linear(8 * 16, anchors * self.no)

    def forward(self, x):
        feat = self.backbone(x).flatten(1)
        out = self.head(feat).view(x.shape[0], self.anchors, self.no)
        box = out[..., :4].sigmoid() * x.shape[-1]
        scores = out[..., 4:6].sigmoid()
        kpts = out[..., 6:].sigmoid() * x.shape[-1]
        return torch.cat([box, scores, kpts], -1), [feat]


def non_max_suppression_kpt(prediction, conf_thres=0.25, iou_thres=0.45, nc=None, nkpt=None, kpt_label=True):
    """Stand-in for utils.general.non_max_suppression_kpt: per image [n, 6 + 3 * nkpt] =
    (x1, y1, x2, y2, conf, cls, kpts); confidence filter and top-k instead of a real NMS."""
    output = []
    for x in prediction:
        conf = x[:, 4:5] * x[:, 5:6]
        keep = conf[:, 0] > conf_thres
        x, conf = x[keep], conf[keep]
        cls = torch.zeros_like(conf)
        det = torch.cat((xywh2xyxy(x[:, :4]), conf, cls, x[:, 6:]), 1)
        output.append(det[det[:, 4].argsort(descending=True)][:5])
    return output


def output_to_keypoint(output):
    # Convert model output to target format [batch_id, class_id, x, y, w, h, conf]
    targets = []
    for i, o in enumerate(output):
        kpts = o[:, 6:]
        o = o[:, :6]
        for index, (*box, conf, cls) in enumerate(o.detach().cpu().numpy()):
            targets.append([i, cls, *list(*xyxy2xywh(np.array(box)[None])), conf, *list(kpts.detach().cpu().numpy()[index])])
    return np.array(targets)


model = TinyPoseModel()
model.eval()
image = torch.rand(1, 3, 64, 64)

output, _ = model(image)
output = non_max_suppression_kpt(output, 0.1, 0.65, nc=model.yaml['nc'], nkpt=model.yaml['nkpt'], kpt_label=True)
output = output_to_keypoint(output)
print(output.shape)
