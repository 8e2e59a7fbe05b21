# Source: https://github.com/qianyu-dlut/MVANet/issues/2
"""Training MVANet with the repository's fix (commit a7107e0, two days after the report): MCLM's
feed-forward on the global tokens clones the relu output before the in-place Dropout, as its
local-token path already did, so the tensor relu saved for its backward is left as it was (the
reporter's workaround, gelu, also avoids it). The Swin backbone is replaced by a small conv
encoder, the decoder blocks are left out, einops' rearrange is written with reshape/permute, and
random images/masks stand in for DIS5K."""
import math

import torch
import torch.nn.functional as F
from torch import nn


def get_activation_fn(activation):
    """Return an activation function given a string"""
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError(F"activation should be relu/gelu, not {activation}.")


def make_cbr(in_dim, out_dim):
    return nn.Sequential(nn.Conv2d(in_dim, out_dim, kernel_size=3, padding=1), nn.BatchNorm2d(out_dim), nn.PReLU())


def image2patches(x):
    """b c (hg h) (wg w) -> (hg wg b) c h w"""
    b, c, H, W = x.shape
    x = x.reshape(b, c, 2, H // 2, 2, W // 2).permute(2, 4, 0, 1, 3, 5)
    return x.reshape(4 * b, c, H // 2, W // 2)


def patches2image(x):
    """(hg wg b) c h w -> b c (hg h) (wg w)"""
    n, c, h, w = x.shape
    x = x.reshape(2, 2, n // 4, c, h, w).permute(2, 3, 0, 4, 1, 5)
    return x.reshape(n // 4, c, 2 * h, 2 * w)


def tokens(x):
    """b c h w -> (h w) b c"""
    return x.flatten(2).permute(2, 0, 1)


class PositionEmbeddingSine:
    def __init__(self, num_pos_feats=64, temperature=10000, normalize=False):
        self.num_pos_feats = num_pos_feats
        self.temperature = temperature
        self.normalize = normalize
        self.scale = 2 * math.pi
        self.dim_t = torch.arange(0, self.num_pos_feats, dtype=torch.float32)

    def __call__(self, b, h, w):
        not_mask = torch.ones([b, h, w], dtype=torch.bool)
        y_embed = not_mask.cumsum(dim=1, dtype=torch.float32)
        x_embed = not_mask.cumsum(dim=2, dtype=torch.float32)
        if self.normalize:
            eps = 1e-6
            y_embed = (y_embed - 0.5) / (y_embed[:, -1:, :] + eps) * self.scale
            x_embed = (x_embed - 0.5) / (x_embed[:, :, -1:] + eps) * self.scale
        dim_t = self.temperature ** (2 * (self.dim_t // 2) / self.num_pos_feats)
        pos_x = x_embed[:, :, :, None] / dim_t
        pos_y = y_embed[:, :, :, None] / dim_t
        pos_x = torch.stack((pos_x[:, :, :, 0::2].sin(), pos_x[:, :, :, 1::2].cos()), dim=4).flatten(3)
        pos_y = torch.stack((pos_y[:, :, :, 0::2].sin(), pos_y[:, :, :, 1::2].cos()), dim=4).flatten(3)
        return torch.cat((pos_y, pos_x), dim=3).permute(0, 3, 1, 2)


class MCLM(nn.Module):
    def __init__(self, d_model, num_heads, pool_ratios=[1, 2]):
        super(MCLM, self).__init__()
        self.attention = nn.ModuleList([nn.MultiheadAttention(d_model, num_heads, dropout=0.1) for _ in range(5)])
        self.linear1 = nn.Linear(d_model, d_model * 2)
        self.linear2 = nn.Linear(d_model * 2, d_model)
        self.linear3 = nn.Linear(d_model, d_model * 2)
        self.linear4 = nn.Linear(d_model * 2, d_model)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(0.1)
        self.dropout1 = nn.Dropout(0.1)
        self.dropout2 = nn.Dropout(0.1)
        self.activation = get_activation_fn('relu')
        self.pool_ratios = pool_ratios
        self.positional_encoding = PositionEmbeddingSine(num_pos_feats=d_model // 2, normalize=True)

    def forward(self, l, g):
        b, c, h, w = l.size()
        concated_locs = patches2image(l)
        pools, p_poses = [], []
        for pool_ratio in self.pool_ratios:
            tgt_hw = (round(h / pool_ratio), round(w / pool_ratio))
            pool = F.adaptive_avg_pool2d(concated_locs, tgt_hw)
            pools.append(tokens(pool))
            p_poses.append(tokens(self.positional_encoding(pool.shape[0], pool.shape[2], pool.shape[3])))
        pools = torch.cat(pools, 0)
        p_poses = torch.cat(p_poses, dim=0)
        g_pos = tokens(self.positional_encoding(g.shape[0], g.shape[2], g.shape[3]))

        # attention between glb (q) & multisensory concated-locs (k,v)
        g_hw_b_c = tokens(g)
        g_hw_b_c = g_hw_b_c + self.dropout1(self.attention[0](g_hw_b_c + g_pos, pools + p_poses, pools)[0])
        g_hw_b_c = self.norm1(g_hw_b_c)
        g_hw_b_c = g_hw_b_c + self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(g_hw_b_c)).clone())))
        g_hw_b_c = self.norm2(g_hw_b_c)

        # attention between origin locs (q) & freshed glb (k,v)
        l_hw_b_c = tokens(l)
        _g = tokens(image2patches(g_hw_b_c.permute(1, 2, 0).reshape(1, c, h, w)))  # 4 quarters of glb
        outputs_re = []
        for i, (_l, _gg) in enumerate(zip(l_hw_b_c.chunk(4, dim=1), _g.chunk(4, dim=1))):
            outputs_re.append(self.attention[i + 1](_l, _gg, _gg)[0])
        outputs_re = torch.cat(outputs_re, 1)

        l_hw_b_c = l_hw_b_c + self.dropout1(outputs_re)
        l_hw_b_c = self.norm1(l_hw_b_c)
        l_hw_b_c = l_hw_b_c + self.dropout2(self.linear4(self.dropout(self.activation(self.linear3(l_hw_b_c)).clone())))
        l_hw_b_c = self.norm2(l_hw_b_c)

        l = torch.cat((l_hw_b_c, g_hw_b_c), 1)
        return l.permute(1, 2, 0).reshape(5, c, h, w)


class MVANet(nn.Module):
    def __init__(self, emb_dim=16):
        super().__init__()
        self.backbone = nn.Sequential(make_cbr(3, emb_dim), nn.MaxPool2d(2), make_cbr(emb_dim, emb_dim),
                                      nn.MaxPool2d(2), nn.Conv2d(emb_dim, emb_dim, 3, padding=1), nn.ReLU())
        self.output5 = make_cbr(emb_dim, emb_dim)
        self.multifieldcrossatt = MCLM(emb_dim, 1, [1, 2])
        self.sideout5 = nn.Sequential(nn.Conv2d(emb_dim, 1, kernel_size=3, padding=1))
        self.output = nn.Sequential(nn.Conv2d(emb_dim, 1, kernel_size=3, padding=1))

        for m in self.modules():
            if isinstance(m, nn.ReLU) or isinstance(m, nn.Dropout):
                m.inplace = True

    def forward(self, x):
        glb = F.interpolate(x, scale_factor=0.5, mode='bilinear')
        loc = image2patches(x)
        input = torch.cat((loc, glb), dim=0)
        e5 = self.output5(self.backbone(input))
        loc_e5, glb_e5 = e5.split([4, 1], dim=0)
        e5 = self.multifieldcrossatt(loc_e5, glb_e5)
        sideout5 = patches2image(self.sideout5(e5)[:-1])
        final_output = F.interpolate(self.output(patches2image(e5[:-1])), size=x.shape[-2:], mode='bilinear')
        return sideout5, final_output


def structure_loss(pred, mask):
    weit = 1 + 5 * torch.abs(F.avg_pool2d(mask, kernel_size=7, stride=1, padding=3) - mask)
    wbce = F.binary_cross_entropy_with_logits(pred, mask, reduction='none')
    wbce = (weit * wbce).sum(dim=(2, 3)) / weit.sum(dim=(2, 3))
    pred = torch.sigmoid(pred)
    inter = ((pred * mask) * weit).sum(dim=(2, 3))
    union = ((pred + mask) * weit).sum(dim=(2, 3))
    wiou = 1 - (inter + 1) / (union - inter + 1)
    return (wbce + wiou).mean()


generator = MVANet()
generator.train()
generator_optimizer = torch.optim.Adam(generator.parameters(), 1e-4)
for i in range(2):
    images, gts = torch.rand(1, 3, 32, 32), (torch.rand(1, 1, 32, 32) > 0.5).float()
    generator_optimizer.zero_grad()
    sideout5, final = generator(images)
    target_4 = F.interpolate(gts, size=sideout5.shape[-2:], mode='nearest')
    loss = structure_loss(sideout5, target_4) + structure_loss(final, gts)
    loss.backward()
    generator_optimizer.step()
