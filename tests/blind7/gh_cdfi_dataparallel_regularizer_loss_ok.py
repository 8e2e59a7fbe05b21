# Source: https://github.com/tding1/CDFI/issues/15
"""CDFI on two GPUs with the fix the reporter proposes: Loss.forward sums each regulariser over
the replicas (`effective_loss = sum(effective_loss)`) before adding it, so loss_sum is a scalar
(the maintainer's alternative is training on one GPU). Same model, DataParallel stand-in and
random frames."""
from types import SimpleNamespace

import torch
import torch.nn as nn
import torch.nn.functional as F


class Module_CharbonnierLoss(nn.Module):
    def __init__(self, epsilon=0.001):
        super(Module_CharbonnierLoss, self).__init__()
        self.epsilon = epsilon

    def forward(self, output, gt):
        return torch.mean(torch.sqrt((output - gt) ** 2 + self.epsilon ** 2))


class Loss(nn.modules.loss._Loss):
    def __init__(self, args):
        super(Loss, self).__init__()
        self.loss = []
        self.loss_module = nn.ModuleList()
        self.regularize = []
        for loss in args.loss.split('+'):
            weight, loss_type = loss.split('*')
            if loss_type == 'MSE':
                loss_function = nn.MSELoss()
            elif loss_type == 'L1':
                loss_function = nn.L1Loss()
            elif loss_type == 'Charb':
                loss_function = Module_CharbonnierLoss()
            elif loss_type in ['g_Spatial', 'Lw', 'Ls']:
                self.regularize.append({'type': loss_type, 'weight': float(weight)})
                continue
            self.loss.append({'type': loss_type, 'weight': float(weight), 'function': loss_function})
        for l in self.loss:
            if l['function'] is not None:
                self.loss_module.append(l['function'])

    def forward(self, output, gt):
        losses = []
        for l in self.loss:
            if l['function'] is not None:
                loss = l['function'](output['frame1'], gt)
                effective_loss = l['weight'] * loss
                losses.append(effective_loss)
        for r in self.regularize:
            effective_loss = r['weight'] * output[r['type']]
            effective_loss = sum(effective_loss)
            losses.append(effective_loss)
        loss_sum = sum(losses)
        return loss_sum


class CDFI_adacof(nn.Module):
    def __init__(self, channels=8):
        super(CDFI_adacof, self).__init__()
        self.features = nn.Sequential(nn.Conv2d(6, channels, 3, padding=1), nn.ReLU(),
                                      nn.Conv2d(channels, channels, 3, padding=1), nn.ReLU())
        self.weight = nn.Conv2d(channels, 2, 3, padding=1)
        self.offset = nn.Conv2d(channels, 4, 3, padding=1)

    def forward(self, frame0, frame2):
        h = self.features(torch.cat([frame0, frame2], dim=1))
        w = torch.softmax(self.weight(h), dim=1)
        offset = self.offset(h)
        frame1 = w[:, :1] * (frame0 + offset[:, :1]) + w[:, 1:] * (frame2 + offset[:, 2:3])
        g_spatial = ((offset[:, :, 1:, :] - offset[:, :, :-1, :]).abs().mean()
                     + (offset[:, :, :, 1:] - offset[:, :, :, :-1]).abs().mean())
        return {'frame1': frame1, 'g_Spatial': g_spatial}


def gather(outputs):
    first = outputs[0]
    if isinstance(first, dict):
        return {k: gather([o[k] for o in outputs]) for k in first}
    if first.dim() == 0:
        return torch.stack(outputs)  # "all input tensors were scalars; will instead unsqueeze"
    return torch.cat(outputs, dim=0)


class DataParallel(nn.Module):
    """torch.nn.DataParallel on len(device_ids) GPUs: one chunk of the batch per replica, outputs
    gathered along dim 0."""
    def __init__(self, module, device_ids):
        super(DataParallel, self).__init__()
        self.module = module
        self.device_ids = list(device_ids)

    def forward(self, *inputs):
        chunks = zip(*(x.chunk(len(self.device_ids)) for x in inputs))
        return gather([self.module(*part) for part in chunks])


args = SimpleNamespace(loss='1*Charb+0.01*g_Spatial', lr=0.001)
model = DataParallel(CDFI_adacof(), device_ids=[0, 1])
loss_fn = Loss(args)
optimizer = torch.optim.Adamax(model.parameters(), lr=args.lr)
for batch_idx in range(3):
    frame0, frame1, frame2 = (torch.rand(4, 3, 8, 8) for _ in range(3))
    optimizer.zero_grad()
    output = model(frame0, frame2)
    loss = loss_fn(output, frame1)
    loss.backward()
    optimizer.step()
    print(batch_idx, loss.item())
