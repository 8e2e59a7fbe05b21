# Source: https://github.com/frank-xwang/RIDE-LongTailRecognition/issues/13
"""RIDE-LongTailRecognition, stage 2 (expert assignment) on two GPUs, with the fix the
maintainer suggested: the per-replica routing losses that DataParallel gathers into a vector are
averaged (`loss = loss.mean()`) before the backward. nn.DataParallel (scatter over two
"devices", gather), the ResNet experts, the BaseTrainer and the data loader are small CPU
stand-ins written here.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class DataParallelStandIn(nn.Module):
    """Stand-in for nn.DataParallel on device_ids=[0, 1]: scatter dim 0, run, gather dim 0."""
    def __init__(self, module, device_ids):
        super().__init__()
        self.module = module
        self.device_ids = device_ids

    def forward(self, *inputs, **kwargs):
        n = len(self.device_ids)
        chunks = [torch.chunk(t, n) for t in inputs]
        kw_chunks = {k: torch.chunk(v, n) for k, v in kwargs.items()}
        outputs = [self.module(*[c[i] for c in chunks], **{k: v[i] for k, v in kw_chunks.items()})
                   for i in range(n)]
        return self.gather(outputs)

    def gather(self, outputs):
        first = outputs[0]
        if isinstance(first, torch.Tensor):
            if first.dim() == 0:  # "Was asked to gather along dimension 0, but all input tensors were scalars"
                return torch.stack(outputs)
            return torch.cat(outputs, dim=0)
        return type(first)(self.gather([o[i] for o in outputs]) for i in range(len(first)))


class Expert(nn.Module):
    def __init__(self, in_dim, num_classes):
        super().__init__()
        self.layer = nn.Sequential(nn.Linear(in_dim, 32), nn.ReLU())
        self.linear = nn.Linear(32, num_classes)

    def forward(self, feat):
        return self.linear(self.layer(feat))


class RIDE_EA(nn.Module):
    """Stage-2 model: frozen experts from stage 1 and trainable expert-assignment routers."""
    requires_target = True

    def __init__(self, in_dim=48, num_classes=10, num_experts=3):
        super().__init__()
        self.backbone = nn.Sequential(nn.Flatten(), nn.Linear(in_dim, 48), nn.ReLU())
        self.experts = nn.ModuleList([Expert(48, num_classes) for _ in range(num_experts)])
        self.routers = nn.ModuleList([nn.Linear(48 + num_classes, 1) for _ in range(num_experts - 1)])
        for p in list(self.backbone.parameters()) + list(self.experts.parameters()):
            p.requires_grad = False
        self.num_experts = num_experts

    def _hook_before_iter(self):
        self.backbone.eval()
        self.experts.eval()

    def forward(self, x, target=None):
        feat = self.backbone(x)
        logits = self.experts[0](feat)
        exp_logits = logits
        route_losses = []
        for i, router in enumerate(self.routers):
            next_logits = self.experts[i + 1](feat)
            ensemble = (exp_logits * (i + 1) + next_logits) / (i + 2)
            # the next expert is worth calling when it corrects the current prediction
            target_route = (exp_logits.argmax(1) != target).float() * (ensemble.argmax(1) == target).float()
            route_score = router(torch.cat([feat, F.softmax(exp_logits, dim=1)], dim=1)).squeeze(1)
            route_losses.append(F.binary_cross_entropy_with_logits(route_score, target_route))
            exp_logits = ensemble
        loss = torch.stack(route_losses).sum()
        return exp_logits, loss


class Trainer:
    def __init__(self, model, criterion, optimizer, data_loader, device_ids):
        self.real_model = model
        self.model = DataParallelStandIn(model, device_ids) if len(device_ids) > 1 else model
        self.criterion = criterion
        self.optimizer = optimizer
        self.data_loader = data_loader
        self.device = torch.device("cpu")
        self.losses = []

    def _train_epoch(self, epoch):
        self.model.train()
        self.real_model._hook_before_iter()
        for batch_idx, data in enumerate(self.data_loader):
            data, target = data
            data, target = data.to(self.device), target.to(self.device)
            self.optimizer.zero_grad()
            if self.real_model.requires_target:
                output = self.model(data, target=target)
                output, loss = output
                if loss.dim() > 0:  # one loss per GPU, gathered by DataParallel
                    loss = loss.mean()
            else:
                output = self.model(data)
                loss = self.criterion(output_logits=output, target=target)
            loss.backward()
            self.optimizer.step()
            self.losses.append(loss.item())

    def train(self, epochs):
        for epoch in range(1, epochs + 1):
            self._train_epoch(epoch)


data_loader = [(torch.randn(8, 3, 4, 4), torch.randint(0, 10, (8,))) for _ in range(3)]
model = RIDE_EA()
optimizer = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=0.01, momentum=0.9)
trainer = Trainer(model, nn.CrossEntropyLoss(), optimizer, data_loader, device_ids=[0, 1])
trainer.train(epochs=1)
