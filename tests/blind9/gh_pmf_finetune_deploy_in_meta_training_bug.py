# Source: https://github.com/hushell/pmf_cvpr22/issues/15
"""P>M>F's meta-training run with `--deploy finetune`, as the reporter did: the model is
ProtoNet_Finetune, whose forward fine-tunes the backbone on the support set and then scores the
query set with its last single_step(x, False), under torch.set_grad_enabled(False), so the
logits returned to train_one_epoch carry no graph and the meta-training loss.backward() raises.
ProtoNet, ProtoNet_Finetune and the training loop follow models/ and engine.py; the DINO ViT is a
small conv backbone, DiffAugment a colour/translation stand-in, the episodes random images."""
from copy import deepcopy

import torch
import torch.nn as nn
import torch.nn.functional as F


def DiffAugment(x, types, prob, detach=True):
    if torch.rand(1).item() < prob:
        x = x + (torch.rand(x.size(0), 1, 1, 1) - 0.5) * 0.2  # color (brightness)
        x = torch.roll(x, shifts=1, dims=3)  # translation
    return x.detach() if detach else x


class ProtoNet(nn.Module):
    def __init__(self, backbone):
        super().__init__()
        # bias & scale of cosine classifier
        self.bias = nn.Parameter(torch.FloatTensor(1).fill_(0), requires_grad=True)
        self.scale_cls = nn.Parameter(torch.FloatTensor(1).fill_(10), requires_grad=True)
        # backbone
        self.backbone = backbone

    def cos_classifier(self, w, f):
        f = F.normalize(f, p=2, dim=f.dim() - 1, eps=1e-12)
        w = F.normalize(w, p=2, dim=w.dim() - 1, eps=1e-12)
        cls_scores = f @ w.transpose(1, 2)  # B, M, nC
        cls_scores = self.scale_cls * (cls_scores + self.bias)
        return cls_scores

    def forward(self, supp_x, supp_y, x):
        num_classes = supp_y.max() + 1  # NOTE: assume B==1
        B, nSupp, C, H, W = supp_x.shape
        supp_f = self.backbone.forward(supp_x.view(-1, C, H, W))
        supp_f = supp_f.view(B, nSupp, -1)
        supp_y_1hot = F.one_hot(supp_y, num_classes).transpose(1, 2)  # B, nC, nSupp
        prototypes = torch.bmm(supp_y_1hot.float(), supp_f)
        prototypes = prototypes / supp_y_1hot.sum(dim=2, keepdim=True)
        feat = self.backbone.forward(x.view(-1, C, H, W))
        feat = feat.view(B, x.shape[1], -1)  # B, nQry, d
        logits = self.cos_classifier(prototypes, feat)  # B, nQry, nC
        return logits


class ProtoNet_Finetune(ProtoNet):
    def __init__(self, backbone, num_iters=3, lr=5e-2, aug_prob=0.9, aug_types=['color', 'translation']):
        super().__init__(backbone)
        self.num_iters = num_iters
        self.lr = lr
        self.aug_types = aug_types
        self.aug_prob = aug_prob

    def load_state_dict(self, state_dict, strict=True):
        super().load_state_dict(state_dict, strict)
        state_dict = self.backbone.state_dict()
        self.backbone_state = deepcopy(state_dict)

    def forward(self, supp_x, supp_y, x):
        # reset backbone state
        self.backbone.load_state_dict(self.backbone_state, strict=True)

        if self.lr == 0:
            return super().forward(supp_x, supp_y, x)

        B, nSupp, C, H, W = supp_x.shape
        num_classes = supp_y.max() + 1  # NOTE: assume B==1

        criterion = nn.CrossEntropyLoss()
        supp_x = supp_x.view(-1, C, H, W)
        x = x.view(-1, C, H, W)
        supp_y_1hot = F.one_hot(supp_y, num_classes).transpose(1, 2)  # B, nC, nSupp
        supp_y = supp_y.view(-1)

        # create optimizer
        opt = torch.optim.Adam(self.backbone.parameters(), lr=self.lr, betas=(0.9, 0.999), weight_decay=0.)

        def single_step(z, mode=True):
            with torch.set_grad_enabled(mode):
                # recalculate prototypes from supp_x with updated backbone
                supp_f = self.backbone.forward(supp_x)
                supp_f = supp_f.view(B, nSupp, -1)
                prototypes = torch.bmm(supp_y_1hot.float(), supp_f)  # B, nC, d
                prototypes = prototypes / supp_y_1hot.sum(dim=2, keepdim=True)

                # compute feature for z
                feat = self.backbone.forward(z)
                feat = feat.view(B, z.shape[0], -1)  # B, nQry, d

                # classification
                logits = self.cos_classifier(prototypes, feat)  # B, nQry, nC
                loss = None

                if mode:  # if enable grad, compute loss
                    loss = criterion(logits.view(B * nSupp, -1), supp_y)

            return logits, loss

        # main loop
        for i in range(self.num_iters):
            opt.zero_grad()
            z = DiffAugment(supp_x, self.aug_types, self.aug_prob, detach=True)
            _, loss = single_step(z, True)
            loss.backward()
            opt.step()

        logits, _ = single_step(x, False)
        return logits


def episodes(n, n_way=3, n_shot=2, n_query=2):
    for _ in range(n):
        supp_y = torch.arange(n_way).repeat_interleave(n_shot)[None]
        y = torch.arange(n_way).repeat_interleave(n_query)[None]
        yield torch.randn(1, n_way * n_shot, 3, 16, 16), supp_y, torch.randn(1, n_way * n_query, 3, 16, 16), y


def train_one_epoch(data_loader, model, criterion, optimizer, epoch):
    model.train()
    for batch_idx, (SupportTensor, SupportLabel, x, y) in enumerate(data_loader):
        output = model(SupportTensor, SupportLabel, x)
        output = output.view(x.shape[0] * x.shape[1], -1)
        y = y.view(-1)
        loss = criterion(output, y)
        loss_value = loss.item()
        optimizer.zero_grad()
        loss.backward()  # expect: GG104
        optimizer.step()
        print(epoch, batch_idx, loss_value)


if __name__ == "__main__":
    backbone = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten())
    model = ProtoNet_Finetune(backbone)  # args.deploy == 'finetune'
    model.load_state_dict(model.state_dict())  # the pretrained DINO weights
    optimizer = torch.optim.SGD(model.parameters(), lr=5e-5, momentum=0.9)
    criterion = nn.CrossEntropyLoss()
    for epoch in range(1):
        train_one_epoch(episodes(2), model, criterion, optimizer, epoch)
