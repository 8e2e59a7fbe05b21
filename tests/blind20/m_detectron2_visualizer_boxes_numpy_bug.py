# Source: https://github.com/facebookresearch/detectron2/commit/b9d83a37db913caebe6f818adf2e1293d7aadcfc
"""detectron2 ``Visualizer``, before commit b9d83a3 "Always detach tensor in visualization"
(PR #3400: "numpy() fails when visualizing an output element of a input batch during inference").

The user runs a detector in eval mode on a batch of images by calling the model directly (not
through ``DefaultPredictor``, which wraps the call in ``torch.no_grad()``), then draws every image's
predictions with ``Visualizer.draw_instance_predictions(outputs[i]["instances"].to("cpu"))``. The
predicted boxes come out of the box-regression head, so ``pred_boxes.tensor`` requires grad, and
``Visualizer._convert_boxes`` does ``boxes.tensor.numpy()``: "Can't call numpy() on Tensor that
requires grad. Use tensor.detach().numpy() instead."

Fix (the commit): ``return boxes.tensor.detach().numpy()`` in ``_convert_boxes``.
"""
import colorsys
import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
random.seed(0)
np.random.seed(0)


# ---- detectron2/structures -------------------------------------------------------------------

class Boxes:
    def __init__(self, tensor: torch.Tensor):
        self.tensor = tensor

    def to(self, device):
        return Boxes(self.tensor.to(device))

    def __len__(self):
        return self.tensor.shape[0]


class RotatedBoxes(Boxes):
    pass


class Instances:
    def __init__(self, image_size, **kwargs):
        self._image_size = image_size
        self._fields = {}
        for k, v in kwargs.items():
            self.set(k, v)

    def set(self, name, value):
        self._fields[name] = value

    def has(self, name):
        return name in self._fields

    def __getattr__(self, name):
        if name == "_fields" or name not in self._fields:
            raise AttributeError("Cannot find field '{}' in the given Instances!".format(name))
        return self._fields[name]

    def to(self, *args, **kwargs):
        ret = Instances(self._image_size)
        for k, v in self._fields.items():
            if hasattr(v, "to"):
                v = v.to(*args, **kwargs)
            ret.set(k, v)
        return ret

    def __len__(self):
        for v in self._fields.values():
            return len(v)
        return 0


# ---- detectron2/utils/visualizer.py, reduced (draws into a numpy canvas) ---------------------

class ColorMode:
    IMAGE = 0
    SEGMENTATION = 1
    IMAGE_BW = 2


def random_color(rgb=False, maximum=255):
    h = random.random()
    ret = np.array(colorsys.hsv_to_rgb(h, 0.8, 1.0)) * maximum
    if not rgb:
        ret = ret[::-1]
    return ret


def _create_text_labels(classes, scores, class_names, is_crowd=None):
    labels = None
    if classes is not None:
        if class_names is not None and len(class_names) > 0:
            labels = [class_names[i] for i in classes]
        else:
            labels = [str(i) for i in classes]
    if scores is not None:
        if labels is None:
            labels = ["{:.0f}%".format(s * 100) for s in scores]
        else:
            labels = ["{} {:.0f}%".format(l, s * 100) for l, s in zip(labels, scores)]
    if labels is not None and is_crowd is not None:
        labels = [l + ("|crowd" if crowd else "") for l, crowd in zip(labels, is_crowd)]
    return labels


class VisImage:
    def __init__(self, img, scale=1.0):
        self.img = img
        self.scale = scale
        self.width, self.height = img.shape[1], img.shape[0]
        self.canvas = img.astype("float32").copy()
        self.texts = []

    def get_image(self):
        return np.clip(self.canvas, 0, 255).astype("uint8")


class Visualizer:
    def __init__(self, img_rgb, metadata=None, scale=1.0, instance_mode=ColorMode.IMAGE):
        self.img = np.asarray(img_rgb).clip(0, 255).astype(np.uint8)
        self.metadata = metadata if metadata is not None else {}
        self.output = VisImage(self.img, scale=scale)
        self._instance_mode = instance_mode

    def draw_instance_predictions(self, predictions):
        boxes = predictions.pred_boxes if predictions.has("pred_boxes") else None
        scores = predictions.scores if predictions.has("scores") else None
        classes = predictions.pred_classes.tolist() if predictions.has("pred_classes") else None
        labels = _create_text_labels(classes, scores, self.metadata.get("thing_classes", None))
        keypoints = predictions.pred_keypoints if predictions.has("pred_keypoints") else None
        masks = None
        colors = None
        alpha = 0.5

        self.overlay_instances(
            masks=masks,
            boxes=boxes,
            labels=labels,
            keypoints=keypoints,
            assigned_colors=colors,
            alpha=alpha,
        )
        return self.output

    def overlay_instances(self, *, boxes=None, labels=None, masks=None, keypoints=None,
                          assigned_colors=None, alpha=0.5):
        num_instances = 0
        if boxes is not None:
            boxes = self._convert_boxes(boxes)
            num_instances = len(boxes)
        if labels is not None:
            assert len(labels) == num_instances
        if assigned_colors is None:
            assigned_colors = [random_color(rgb=True, maximum=1) for _ in range(num_instances)]
        if num_instances == 0:
            return self.output

        # Display in largest to smallest order to reduce occlusion.
        areas = np.prod(boxes[:, 2:] - boxes[:, :2], axis=1)
        sorted_idxs = np.argsort(-areas).tolist()
        boxes = boxes[sorted_idxs]
        labels = [labels[k] for k in sorted_idxs] if labels is not None else None
        assigned_colors = [assigned_colors[idx] for idx in sorted_idxs]

        for i in range(num_instances):
            color = assigned_colors[i]
            self.draw_box(boxes[i], edge_color=color)
            if labels is not None:
                x0, y0, x1, y1 = boxes[i]
                self.draw_text(labels[i], (x0, y0), color=color)
        return self.output

    def draw_box(self, box_coord, alpha=0.5, edge_color="g", line_style="-"):
        h, w = self.output.height, self.output.width
        x0, y0, x1, y1 = [int(round(float(v))) for v in box_coord]
        x0, x1 = max(0, min(x0, w - 1)), max(0, min(x1, w - 1))
        y0, y1 = max(0, min(y0, h - 1)), max(0, min(y1, h - 1))
        rgb = np.asarray(edge_color) * 255
        self.output.canvas[y0, x0:x1 + 1] = rgb
        self.output.canvas[y1, x0:x1 + 1] = rgb
        self.output.canvas[y0:y1 + 1, x0] = rgb
        self.output.canvas[y0:y1 + 1, x1] = rgb
        return self.output

    def draw_text(self, text, position, color="g"):
        self.output.texts.append((text, tuple(float(p) for p in position)))
        return self.output

    def _convert_boxes(self, boxes):
        """
        Convert different format of boxes to an NxB array, where B = 4 or 5 is the box dimension.
        """
        if isinstance(boxes, Boxes) or isinstance(boxes, RotatedBoxes):
            return boxes.tensor.numpy()  # expect: GG107
        else:
            return np.asarray(boxes)


# ---- a tiny one-stage detector standing in for build_model(cfg) ------------------------------

class TinyDetector(nn.Module):
    def __init__(self, num_classes=3, num_anchors=4, topk=3):
        super().__init__()
        self.backbone = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.ReLU(),
                                      nn.Conv2d(8, 8, 3, stride=2, padding=1), nn.ReLU(),
                                      nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.num_anchors = num_anchors
        self.cls_score = nn.Linear(8, num_anchors * (num_classes + 1))
        self.bbox_pred = nn.Linear(8, num_anchors * 4)
        self.num_classes = num_classes
        self.topk = topk
        self.register_buffer("pixel_mean", torch.tensor([103.53, 116.28, 123.675]).view(3, 1, 1))

    def forward(self, batched_inputs):
        images = torch.stack([(x["image"].float() - self.pixel_mean) / 58.0 for x in batched_inputs])
        feats = self.backbone(images)
        logits = self.cls_score(feats).view(len(batched_inputs), self.num_anchors, -1)
        deltas = self.bbox_pred(feats).view(len(batched_inputs), self.num_anchors, 4)
        results = []
        for i, x in enumerate(batched_inputs):
            h, w = x["height"], x["width"]
            anchors = torch.tensor([[0, 0, w / 2, h / 2], [w / 2, 0, w, h / 2],
                                    [0, h / 2, w / 2, h], [w / 4, h / 4, 3 * w / 4, 3 * h / 4]],
                                   dtype=torch.float32)
            widths, heights = anchors[:, 2] - anchors[:, 0], anchors[:, 3] - anchors[:, 1]
            ctr_x, ctr_y = anchors[:, 0] + 0.5 * widths, anchors[:, 1] + 0.5 * heights
            d = deltas[i]
            pred_ctr_x = d[:, 0] * widths + ctr_x
            pred_ctr_y = d[:, 1] * heights + ctr_y
            pred_w = torch.exp(d[:, 2].clamp(max=4.0)) * widths
            pred_h = torch.exp(d[:, 3].clamp(max=4.0)) * heights
            boxes = torch.stack([pred_ctr_x - 0.5 * pred_w, pred_ctr_y - 0.5 * pred_h,
                                 pred_ctr_x + 0.5 * pred_w, pred_ctr_y + 0.5 * pred_h], dim=1)
            probs = F.softmax(logits[i], dim=-1)[:, :-1]
            scores, classes = probs.max(dim=1)
            keep = scores.topk(self.topk).indices
            inst = Instances((h, w), pred_boxes=Boxes(boxes[keep]), scores=scores[keep],
                             pred_classes=classes[keep])
            results.append({"instances": inst})
        return results


# ---- the user's script -----------------------------------------------------------------------

metadata = {"thing_classes": ["person", "car", "dog"]}
model = TinyDetector()
model.eval()

imgs = [np.random.randint(0, 255, (32, 48, 3), dtype=np.uint8) for _ in range(2)]
inputs = [{"image": torch.as_tensor(img.transpose(2, 0, 1).copy()), "height": 32, "width": 48}
          for img in imgs]
outputs = model(inputs)

for img, output in zip(imgs, outputs):
    v = Visualizer(img[:, :, ::-1], metadata, scale=1.2)
    out = v.draw_instance_predictions(output["instances"].to("cpu"))
    vis = out.get_image()
    print(vis.shape, out.texts)
