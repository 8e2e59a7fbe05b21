"""Detection-style loss dictionary: every term of the dict is backwarded in a loop over its items
(the terms share the backbone's features)."""
import torch
import torch.nn as nn

backbone = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU())
box_head = nn.Conv2d(8, 4, 1)
obj_head = nn.Conv2d(8, 1, 1)
params = [p for m in (backbone, box_head, obj_head) for p in m.parameters()]
optimizer = torch.optim.SGD(params, lr=0.01, momentum=0.9)

images = torch.randn(2, 3, 6, 6)
box_targets = torch.randn(2, 4, 6, 6)
obj_targets = (torch.rand(2, 1, 6, 6) > 0.8).float()
for step in range(2):
    feats = backbone(images)
    loss_dict = {
        "loss_box": nn.functional.l1_loss(box_head(feats), box_targets),
        "loss_obj": nn.functional.binary_cross_entropy_with_logits(obj_head(feats), obj_targets),
    }
    optimizer.zero_grad()
    for name, value in loss_dict.items():
        value.backward()  # expect: GG101
    optimizer.step()
