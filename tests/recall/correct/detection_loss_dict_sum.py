"""Detection-style loss dictionary summed into one loss and backwarded once."""
import torch
import torch.nn as nn

backbone = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU())
box_head, obj_head = nn.Conv2d(8, 4, 1), nn.Conv2d(8, 1, 1)
params = [p for m in (backbone, box_head, obj_head) for p in m.parameters()]
optimizer = torch.optim.SGD(params, lr=0.01, momentum=0.9)
images, box_t = torch.randn(2, 3, 6, 6), torch.randn(2, 4, 6, 6)
obj_t = (torch.rand(2, 1, 6, 6) > 0.8).float()
for step in range(2):
    feats = backbone(images)
    loss_dict = {
        "loss_box": nn.functional.l1_loss(box_head(feats), box_t),
        "loss_obj": nn.functional.binary_cross_entropy_with_logits(obj_head(feats), obj_t),
    }
    losses = sum(loss for loss in loss_dict.values())
    optimizer.zero_grad()
    losses.backward()
    optimizer.step()
