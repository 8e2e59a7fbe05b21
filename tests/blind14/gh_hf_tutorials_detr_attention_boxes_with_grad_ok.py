# Source: https://github.com/NielsRogge/Transformers-Tutorials/pull/178
"""Transformers-Tutorials' DETR notebook, attention-visualization cell, with the PR's fix: the
four corners unpacked from `bboxes_scaled` are detached in the loop
(`xmin, ymin, xmax, ymax = map(lambda x: x.detach(), (xmin, ymin, xmax, ymax))`) before
`plt.Rectangle` converts them with NumPy. DetrForObjectDetection, the feature extractor, PIL and
matplotlib are small stand-ins written here.
"""
import numpy as np
import torch
import torch.nn as nn

COLORS = [[0.000, 0.447, 0.741], [0.850, 0.325, 0.098], [0.929, 0.694, 0.125]]


class DetrConfig:
    id2label = {0: "cat", 1: "remote", 2: "couch"}


class DetrOutput(dict):
    __getattr__ = dict.__getitem__


class TinyDetrForObjectDetection(nn.Module):
    """Stand-in for DetrForObjectDetection: conv backbone, queries attending to the feature map."""
    def __init__(self, num_labels=3, num_queries=6, d=16):
        super().__init__()
        self.config = DetrConfig()
        self.backbone = nn.Conv2d(3, d, 4, stride=4)
        self.query_embed = nn.Embedding(num_queries, d)
        self.class_labels_classifier = nn.Linear(d, num_labels + 1)
        self.bbox_predictor = nn.Sequential(nn.Linear(d, d), nn.ReLU(), nn.Linear(d, 4))

    def forward(self, pixel_values, output_attentions=False):
        feats = self.backbone(pixel_values)                      # (1, d, h, w)
        memory = feats.flatten(2).transpose(1, 2)               # (1, h*w, d)
        q = self.query_embed.weight.unsqueeze(0)                # (1, Q, d)
        attn = torch.softmax(q @ memory.transpose(1, 2) / 4.0, -1)
        hs = attn @ memory + q
        out = DetrOutput(logits=self.class_labels_classifier(hs),
                         pred_boxes=self.bbox_predictor(hs).sigmoid(),
                         conv_features=feats)
        if output_attentions:
            out["cross_attentions"] = (attn,)
        return out


def center_to_corners_format(x):
    x_c, y_c, w, h = x.unbind(-1)
    return torch.stack([x_c - 0.5 * w, y_c - 0.5 * h, x_c + 0.5 * w, y_c + 0.5 * h], dim=-1)


class DetrFeatureExtractor:
    """Stand-in for transformers' DetrFeatureExtractor (encode + post_process)."""
    def __call__(self, images, return_tensors="pt"):
        return {"pixel_values": torch.as_tensor(images, dtype=torch.float32).permute(2, 0, 1)[None] / 255.}

    def post_process(self, outputs, target_sizes):
        prob = outputs.logits.softmax(-1)
        scores, labels = prob[..., :-1].max(-1)
        boxes = center_to_corners_format(outputs.pred_boxes)
        img_h, img_w = target_sizes.unbind(1)
        scale_fct = torch.stack([img_w, img_h, img_w, img_h], dim=1)
        boxes = boxes * scale_fct[:, None, :]
        return [{"scores": s, "labels": l, "boxes": b} for s, l, b in zip(scores, labels, boxes)]


class Rectangle:
    """Stand-in for matplotlib.patches.Rectangle: stores its corner as a float array."""
    def __init__(self, xy, width, height, fill=True, color=None, linewidth=1):
        self._x0, self._y0 = np.asarray(xy, dtype=float)
        self._width, self._height = float(width), float(height)


class Axes:
    def __init__(self):
        self.patches = []

    def imshow(self, img):
        self.img = np.asarray(img)

    def add_patch(self, p):
        self.patches.append(p)

    def axis(self, s):
        pass

    def set_title(self, t):
        self.title = t


class plt:
    Rectangle = Rectangle

    @staticmethod
    def subplots(ncols, nrows, figsize=None):
        return None, np.array([[Axes() for _ in range(ncols)] for _ in range(nrows)], dtype=object)


im = np.random.randint(0, 255, (32, 48, 3)).astype(np.uint8)   # stand-in for the COCO cats image
feature_extractor = DetrFeatureExtractor()
model = TinyDetrForObjectDetection()
encoding = feature_extractor(im, return_tensors="pt")
outputs = model(**encoding)

# keep only predictions of queries with 0.2+ confidence (excluding no-object class)
probas = outputs.logits.softmax(-1)[0, :, :-1]
keep = probas.max(-1).values > 0.2
keep[0] = True
# rescale bounding boxes
target_sizes = torch.tensor(im.shape[:2]).unsqueeze(0)
postprocessed_outputs = feature_extractor.post_process(outputs, target_sizes)
bboxes_scaled = postprocessed_outputs[0]['boxes'][keep]

# propagate through the model again to get the attentions
with torch.no_grad():
    att_outputs = model(**encoding, output_attentions=True)
conv_features = att_outputs.conv_features
dec_attn_weights = att_outputs.cross_attentions[-1]
h, w = conv_features.shape[-2:]

fig, axs = plt.subplots(ncols=len(bboxes_scaled), nrows=2, figsize=(22, 7))
colors = COLORS * 100
for idx, ax_i, (xmin, ymin, xmax, ymax) in zip(keep.nonzero(), axs.T, bboxes_scaled):
    xmin, ymin, xmax, ymax = map(lambda x: x.detach(), (xmin, ymin, xmax, ymax))
    ax = ax_i[0]
    ax.imshow(dec_attn_weights[0, idx].view(h, w))
    ax.axis('off')
    ax.set_title(f'query id: {idx.item()}')
    ax = ax_i[1]
    ax.imshow(im)
    ax.add_patch(plt.Rectangle((xmin, ymin), xmax - xmin, ymax - ymin,
                               fill=False, color='blue', linewidth=3))
    ax.axis('off')
    ax.set_title(model.config.id2label[probas[idx].argmax().item()])
