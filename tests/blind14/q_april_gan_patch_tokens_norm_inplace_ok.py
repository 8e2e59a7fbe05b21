# Source: https://github.com/ByChelsea/VAND-APRIL-GAN/issues/9
"""Fixed twin of q_april_gan_patch_tokens_norm_inplace_bug.py. APRIL-GAN `train.py` normalized the
mapped patch tokens in place (`patch_tokens[layer] /= patch_tokens[layer].norm(...)`), overwriting
the tensor the norm saved, and `loss.backward()` raised the in-place modification error. The fix
applied here (the right one: the issue thread shows no code fix) divides out of place and stores
the result back in the list. open_clip, the dataset, the prompt ensemble and CUDA autocast are
small stand-ins written in the file.
"""
import contextlib
import random
from types import SimpleNamespace

import numpy as np
import torch
import torch.nn as nn
from torch.nn import functional as F

# ----------------------------- stand-ins: open_clip, dataset, prompt ensemble -----------------------------


class TinyViT(nn.Module):
    def __init__(self, width=16, layers=4, patch=4, embed_dim=8):
        super().__init__()
        self.conv1 = nn.Conv2d(3, width, patch, patch)
        self.cls = nn.Parameter(torch.randn(1, 1, width) * 0.02)
        self.blocks = nn.ModuleList([nn.TransformerEncoderLayer(width, 2, 2 * width, 0.0, batch_first=True)
                                     for _ in range(layers)])
        self.proj = nn.Linear(width, embed_dim)

    def encode_image(self, image, out_layers):
        x = self.conv1(image).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls.expand(x.shape[0], -1, -1), x], dim=1)
        tokens = []
        for i, blk in enumerate(self.blocks):
            x = blk(x)
            if i + 1 in out_layers:
                tokens.append(x)
        return self.proj(x[:, 0]), tokens


class open_clip:
    @staticmethod
    def create_model_and_transforms(name, image_size, pretrained=None):
        return TinyViT(), None, (lambda img: img)

    @staticmethod
    def get_tokenizer(name):
        return lambda texts: torch.randint(0, 100, (len(texts), 5))


def autocast():
    return contextlib.nullcontext()  # torch.cuda.amp.autocast() stand-in (CPU run)


class MVTecDataset:
    def __init__(self, root, transform, target_transform, aug_rate, n=4, image_size=16):
        self.items = [{'img': torch.randn(3, image_size, image_size), 'cls_name': random.choice(['bottle', 'cable']),
                       'img_mask': (torch.rand(1, image_size, image_size) > 0.8).float()} for _ in range(n)]

    def get_cls_names(self):
        return ['bottle', 'cable']


def DataLoader(data, batch_size, shuffle):
    batches = []
    for s in range(0, len(data.items), batch_size):
        chunk = data.items[s:s + batch_size]
        batches.append({'img': torch.stack([c['img'] for c in chunk]), 'cls_name': [c['cls_name'] for c in chunk],
                        'img_mask': torch.stack([c['img_mask'] for c in chunk])})
    return batches


def encode_text_with_prompt_ensemble(model, objs, tokenizer, device):
    text_prompts = {}
    for obj in objs:
        feats = F.normalize(torch.randn(8, 2), dim=0)  # (embed_dim, normal/anomalous)
        text_prompts[obj] = feats
    return text_prompts

# ----------------------------- model.py -----------------------------


class LinearLayer(nn.Module):
    def __init__(self, dim_in, dim_out, k, model):
        super(LinearLayer, self).__init__()
        if 'ViT' in model:
            self.fc = nn.ModuleList([nn.Linear(dim_in, dim_out) for i in range(k)])
        else:
            self.fc = nn.ModuleList([nn.Linear(dim_in * 2 ** (i + 2), dim_out) for i in range(k)])

    def forward(self, tokens):
        for i in range(len(tokens)):
            if len(tokens[i].shape) == 3:
                tokens[i] = self.fc[i](tokens[i][:, 1:, :])
            else:
                B, C, H, W = tokens[i].shape
                tokens[i] = self.fc[i](tokens[i].view(B, C, -1).permute(0, 2, 1).contiguous())
        return tokens

# ----------------------------- loss.py -----------------------------


class FocalLoss(nn.Module):
    def __init__(self, gamma=2, smooth=1e-5):
        super(FocalLoss, self).__init__()
        self.gamma = gamma
        self.smooth = smooth

    def forward(self, logit, target):
        num_class = logit.shape[1]
        logit = logit.view(logit.size(0), logit.size(1), -1)
        logit = logit.permute(0, 2, 1).contiguous()
        logit = logit.view(-1, logit.size(-1))
        target = target.view(-1, 1)
        idx = target.cpu().long()
        one_hot_key = torch.FloatTensor(target.size(0), num_class).zero_()
        one_hot_key = one_hot_key.scatter_(1, idx, 1)
        one_hot_key = torch.clamp(one_hot_key, self.smooth / (num_class - 1), 1.0 - self.smooth)
        pt = (one_hot_key * logit).sum(1) + self.smooth
        logpt = pt.log()
        loss = -1 * torch.pow((1 - pt), self.gamma) * logpt
        return loss.mean()


class BinaryDiceLoss(nn.Module):
    def forward(self, input, targets):
        N = targets.size()[0]
        smooth = 1
        input_flat = input.reshape(N, -1)
        targets_flat = targets.reshape(N, -1)
        intersection = input_flat * targets_flat
        N_dice_eff = (2 * intersection.sum(1) + smooth) / (input_flat.sum(1) + targets_flat.sum(1) + smooth)
        return 1 - N_dice_eff.sum() / N

# ----------------------------- train.py -----------------------------


def setup_seed(seed):
    torch.manual_seed(seed)
    np.random.seed(seed)
    random.seed(seed)


def train(args):
    epochs = args.epoch
    learning_rate = args.learning_rate
    batch_size = args.batch_size
    image_size = args.image_size
    device = 'cpu'
    features_list = args.features_list
    model_configs = {'vision_cfg': {'width': 16}, 'embed_dim': 8}

    model, _, preprocess = open_clip.create_model_and_transforms(args.model, image_size, pretrained=args.pretrained)
    model.to(device)
    tokenizer = open_clip.get_tokenizer(args.model)

    train_data = MVTecDataset(root=args.train_data_path, transform=preprocess, target_transform=None,
                              aug_rate=args.aug_rate, image_size=image_size)
    train_dataloader = DataLoader(train_data, batch_size=batch_size, shuffle=True)

    trainable_layer = LinearLayer(model_configs['vision_cfg']['width'], model_configs['embed_dim'],
                                  len(args.features_list), args.model).to(device)
    optimizer = torch.optim.Adam(list(trainable_layer.parameters()), lr=learning_rate, betas=(0.5, 0.999))

    loss_focal = FocalLoss()
    loss_dice = BinaryDiceLoss()

    with autocast(), torch.no_grad():
        obj_list = train_data.get_cls_names()
        text_prompts = encode_text_with_prompt_ensemble(model, obj_list, tokenizer, device)

    for epoch in range(epochs):
        loss_list = []
        for items in train_dataloader:
            image = items['img'].to(device)
            cls_name = items['cls_name']
            with autocast():
                with torch.no_grad():
                    image_features, patch_tokens = model.encode_image(image, features_list)
                    text_features = []
                    for cls in cls_name:
                        text_features.append(text_prompts[cls])
                    text_features = torch.stack(text_features, dim=0)

                # pixel level
                patch_tokens = trainable_layer(patch_tokens)
                anomaly_maps = []
                for layer in range(len(patch_tokens)):
                    patch_tokens[layer] = patch_tokens[layer] / patch_tokens[layer].norm(dim=-1, keepdim=True)
                    anomaly_map = (100.0 * patch_tokens[layer] @ text_features)
                    B, L, C = anomaly_map.shape
                    H = int(np.sqrt(L))
                    anomaly_map = F.interpolate(anomaly_map.permute(0, 2, 1).view(B, 2, H, H),
                                                size=image_size, mode='bilinear', align_corners=True)
                    anomaly_map = torch.softmax(anomaly_map, dim=1)
                    anomaly_maps.append(anomaly_map)

            gt = items['img_mask'].squeeze().to(device)
            gt[gt > 0.5], gt[gt <= 0.5] = 1, 0
            loss = 0
            for num in range(len(anomaly_maps)):
                loss += loss_focal(anomaly_maps[num], gt)
                loss += loss_dice(anomaly_maps[num][:, 1, :, :], gt)

            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            loss_list.append(loss.item())

        if (epoch + 1) % args.print_freq == 0:
            print('epoch [{}/{}], loss:{:.4f}'.format(epoch + 1, epochs, np.mean(loss_list)))


args = SimpleNamespace(train_data_path='./data/mvtec', dataset='mvtec', model='ViT-B-16', pretrained='laion400m_e32',
                       features_list=[1, 2, 3], epoch=2, learning_rate=0.001, batch_size=2, image_size=16,
                       aug_rate=0.2, print_freq=1)
setup_seed(111)
train(args)
