# Source: https://github.com/eriklindernoren/PyTorch-YOLOv3/issues/331
"""eriklindernoren/PyTorch-YOLOv3's train.py with the model wrapped as the reporter did,
`model = torch.nn.DataParallel(model, device_ids=[0, 1])`: Darknet.forward(imgs, targets) sums
the YOLO layers' losses itself and returns (loss, outputs), so each replica returns a 0-dim loss
and DataParallel gathers them into a vector of two; `loss.backward()` raises. Darknet is a small
stack of conv blocks and one YOLOLayer whose loss (box MSE, objectness and class BCE) follows
models.py in spirit; DataParallel is a CPU stand-in that splits every input over the two devices
and gathers like torch's Gather; the COCO batches are random images and targets."""
import torch
import torch.nn as nn
from torch.autograd import Variable


class YOLOLayer(nn.Module):
    def __init__(self, num_classes, img_dim=32):
        super(YOLOLayer, self).__init__()
        self.num_classes = num_classes
        self.img_dim = img_dim
        self.mse_loss = nn.MSELoss()
        self.bce_loss = nn.BCELoss()

    def forward(self, x, targets=None, img_dim=None):
        num_samples, _, grid_size, _ = x.shape
        prediction = x.view(num_samples, 5 + self.num_classes, grid_size, grid_size).permute(0, 2, 3, 1)
        px, py = torch.sigmoid(prediction[..., 0]), torch.sigmoid(prediction[..., 1])
        pw, ph = prediction[..., 2], prediction[..., 3]
        pred_conf = torch.sigmoid(prediction[..., 4])
        pred_cls = torch.sigmoid(prediction[..., 5:])
        output = torch.cat((torch.stack([px, py, pw, ph], -1).view(num_samples, -1, 4),
                            pred_conf.view(num_samples, -1, 1),
                            pred_cls.view(num_samples, -1, self.num_classes)), -1)
        if targets is None:
            return output, 0

        obj_mask = torch.zeros(num_samples, grid_size, grid_size, dtype=torch.bool)
        tx = torch.zeros(num_samples, grid_size, grid_size)
        ty = torch.zeros_like(tx)
        tcls = torch.zeros(num_samples, grid_size, grid_size, self.num_classes)
        for b, label, cx, cy, _, _ in targets.tolist():
            b = int(b) % num_samples
            gi, gj = int(cx * grid_size), int(cy * grid_size)
            obj_mask[b, gj, gi] = True
            tx[b, gj, gi], ty[b, gj, gi] = cx * grid_size - gi, cy * grid_size - gj
            tcls[b, gj, gi, int(label)] = 1
        tconf = obj_mask.float()
        loss_x = self.mse_loss(px[obj_mask], tx[obj_mask])
        loss_y = self.mse_loss(py[obj_mask], ty[obj_mask])
        loss_conf = self.bce_loss(pred_conf, tconf)
        loss_cls = self.bce_loss(pred_cls[obj_mask], tcls[obj_mask])
        total_loss = loss_x + loss_y + loss_conf + loss_cls
        return output, total_loss


class Darknet(nn.Module):
    def __init__(self, num_classes=3):
        super(Darknet, self).__init__()
        self.module_list = nn.ModuleList([
            nn.Sequential(nn.Conv2d(3, 8, 3, 1, 1), nn.BatchNorm2d(8), nn.LeakyReLU(0.1)),
            nn.Sequential(nn.Conv2d(8, 16, 3, 2, 1), nn.BatchNorm2d(16), nn.LeakyReLU(0.1)),
            nn.Conv2d(16, 5 + num_classes, 1),
        ])
        self.yolo_layers = nn.ModuleList([YOLOLayer(num_classes)])

    def forward(self, x, targets=None):
        img_dim = x.shape[2]
        loss = 0
        yolo_outputs = []
        for module in self.module_list:
            x = module(x)
        for yolo_layer in self.yolo_layers:
            x, layer_loss = yolo_layer(x, targets, img_dim)
            loss += layer_loss
            yolo_outputs.append(x)
        yolo_outputs = torch.cat(yolo_outputs, 1).detach()
        return yolo_outputs if targets is None else (loss, yolo_outputs)


def _gather(outputs):
    first = outputs[0]
    if isinstance(first, torch.Tensor):
        if first.dim() == 0:  # torch warns and unsqueezes: one entry per device
            return torch.stack(outputs)
        return torch.cat(outputs, 0)
    return type(first)(_gather(list(parts)) for parts in zip(*outputs))


class DataParallel(nn.Module):
    """torch.nn.DataParallel over device_ids, run on CPU: one replica call per chunk of every input."""

    def __init__(self, module, device_ids):
        super().__init__()
        self.module = module
        self.device_ids = device_ids

    def forward(self, *inputs):
        chunks = zip(*(x.chunk(len(self.device_ids)) for x in inputs))
        return _gather([self.module(*chunk) for chunk in chunks])


def dataloader(batches=2, batch_size=4, n_targets=6, num_classes=3):
    for _ in range(batches):
        targets = torch.cat([torch.randint(0, batch_size, (n_targets, 1)).float(),
                             torch.randint(0, num_classes, (n_targets, 1)).float(),
                             torch.rand(n_targets, 4) * 0.9], 1)
        yield None, torch.rand(batch_size, 3, 32, 32), targets


if __name__ == "__main__":
    device = torch.device("cpu")
    model = Darknet().to(device)
    model = DataParallel(model, device_ids=[0, 1])
    optimizer = torch.optim.Adam(model.parameters())
    gradient_accumulations = 2

    for epoch in range(1):
        model.train()
        for batch_i, (_, imgs, targets) in enumerate(dataloader()):
            batches_done = 2 * epoch + batch_i

            imgs = Variable(imgs.to(device))
            targets = Variable(targets.to(device), requires_grad=False)

            loss, outputs = model(imgs, targets)
            loss.backward()  # expect: GG105

            if batches_done % gradient_accumulations:
                # Accumulates gradient before each step
                optimizer.step()
                optimizer.zero_grad()
            print(epoch, batch_i, loss.item())
