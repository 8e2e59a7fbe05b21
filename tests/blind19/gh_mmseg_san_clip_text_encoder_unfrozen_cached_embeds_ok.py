# Source: https://github.com/open-mmlab/mmsegmentation/issues/3577
"""mmsegmentation SAN (open-vocabulary segmentation): the decode head classifies mask
features against class embeddings produced by `CLIPTextEncoder`. The reporter wants to
fine-tune the text encoder, so they removed `self._freeze()` and the `@torch.no_grad()`
on `encode_text` in mmseg/models/text_encoder/clip_text_encoder.py.

`CLIPTextEncoder` is built with `cache_feature=True`: the first forward stores the class
embeddings in `self.cache[dataset_name]`, later forwards return the cached tensor. Once
the encoder is trainable, that cached tensor carries the first iteration's text-encoder
graph; the first `loss.backward()` frees it and the second iteration's backward walks
into it again, raising "Trying to backward through the graph a second time".

This is the fixed twin; the issue got no answer, the right fix keeps the encoder trainable and
turns the cache off, `text_encoder=dict(..., cache_feature=False)`, so the class
embeddings are recomputed (with a fresh graph) every iteration. mmseg / mmengine /
the CLIP tokenizer are replaced by small stand-ins keeping the encoder's code.
"""
from typing import List

import numpy as np
import torch
import torch.nn as nn
from torch.nn import functional as F


def get_classes(dataset_name):
    return ['background', 'road', 'car', 'person', 'tree']


def get_predefined_templates(name):
    return ['a photo of a {}.', 'a picture of the {}.']


class tokenizer:
    @staticmethod
    def tokenize(texts, context_length=8):
        out = torch.zeros(len(texts), context_length, dtype=torch.long)
        for i, t in enumerate(texts):
            ids = [1 + (sum(map(ord, w)) % 90) for w in t.split()][:context_length - 1]
            out[i, :len(ids)] = torch.tensor(ids)
            out[i, len(ids)] = 99  # eot token, the highest id
        return out


class TransformerLayer(nn.Module):
    """stand-in for mmcv BaseTransformerLayer(norm, self_attn, norm, ffn)"""

    def __init__(self, embed_dims, num_heads, mlp_ratio):
        super().__init__()
        self.norm1 = nn.LayerNorm(embed_dims)
        self.attn = nn.MultiheadAttention(embed_dims, num_heads)
        self.norm2 = nn.LayerNorm(embed_dims)
        self.ffn = nn.Sequential(nn.Linear(embed_dims, mlp_ratio * embed_dims), nn.GELU(),
                                 nn.Linear(mlp_ratio * embed_dims, embed_dims))

    def forward(self, query, attn_masks=None):
        h = self.norm1(query)
        query = query + self.attn(h, h, h, attn_mask=attn_masks, need_weights=False)[0]
        return query + self.ffn(self.norm2(query))


class CLIPTextEncoder(nn.Module):
    def __init__(self, dataset_name: str = None, vocabulary: List[str] = None, templates: str = 'vild',
                 total_vocab_size: int = 100, context_length: int = 8, embed_dims: int = 16,
                 num_layers: int = 1, num_heads: int = 2, mlp_ratio: int = 2, output_dims: int = 16,
                 cache_feature: bool = True, cat_bg: bool = True):
        super().__init__()
        self.templates = get_predefined_templates(templates)
        self.dataset_name = dataset_name
        self.vocabulary = vocabulary
        self.num_pos = context_length
        self.token_embedding = nn.Embedding(total_vocab_size, embed_dims)
        self.positional_embedding = nn.Parameter(torch.randn(context_length, embed_dims) * 0.01)
        self.text_projection = nn.Parameter(torch.randn(embed_dims, output_dims) * embed_dims ** -0.5)
        self.logit_scale = nn.Parameter(torch.ones([]) * np.log(1 / 0.07))
        self.transformer = nn.ModuleList()
        self.register_buffer('attn_mask', self.build_attention_mask(), persistent=False)
        for i in range(num_layers):
            self.transformer.append(TransformerLayer(embed_dims, num_heads, mlp_ratio))
        self.ln_final = nn.LayerNorm(embed_dims)

        self.cache_feature = cache_feature
        if self.cache_feature:
            self.cache = {}

        # self._freeze()   # removed by the reporter: fine-tune the text encoder

        self.cat_bg = cat_bg
        if self.cat_bg:
            self.bg_embed = nn.Parameter(torch.randn(1, self.text_projection.shape[1]))

    def build_attention_mask(self):
        mask = torch.empty(self.num_pos, self.num_pos)
        mask.fill_(float('-inf'))
        mask.triu_(1)  # zero out the lower diagonal
        return mask

    def _freeze(self):
        for param in self.parameters():
            param.requires_grad = False

    # @torch.no_grad()   # removed by the reporter
    def encode_text(self, text, normalize=False):
        x = self.token_embedding(text)  # [batch_size, n_ctx, d_model]
        x = x + self.positional_embedding
        x = x.permute(1, 0, 2)  # NLD -> LND
        for block in self.transformer:
            x = block(query=x, attn_masks=self.attn_mask)
        x = x.permute(1, 0, 2)  # LND -> NLD
        x = self.ln_final(x)
        x = x[torch.arange(x.shape[0]), text.argmax(dim=-1)] @ self.text_projection
        return F.normalize(x, dim=-1) if normalize else x

    def template_encode(self, vocabulary):
        text_embed_bucket = []
        for template in self.templates:
            text_inputs = tokenizer.tokenize([template.format(noun) for noun in vocabulary])
            text_embed = self.encode_text(text_inputs, normalize=True)
            text_embed_bucket.append(text_embed)
        text_embed = torch.stack(text_embed_bucket).mean(dim=0)
        text_embed = text_embed / text_embed.norm(dim=-1, keepdim=True)
        return text_embed

    def forward(self):
        class_names = get_classes(self.dataset_name)
        if class_names[0] == 'background':
            class_names = class_names[1:]
        if self.cache_feature:
            if self.dataset_name not in self.cache:
                class_embeds = self.template_encode(class_names)
                self.cache[self.dataset_name] = class_embeds
            else:
                class_embeds = self.cache[self.dataset_name]
        else:
            class_embeds = self.template_encode(class_names)

        if self.cat_bg:
            class_embeds = torch.cat([class_embeds, self.bg_embed])
            class_embeds = F.normalize(class_embeds, p=2, dim=-1)
        return self.logit_scale.exp() * class_embeds


class MultimodalEncoderDecoder(nn.Module):
    """stand-in for mmseg's MultimodalEncoderDecoder with a SAN-like head"""

    def __init__(self, text_encoder_cfg):
        super().__init__()
        self.image_encoder = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(),
                                           nn.Conv2d(16, 16, 3, padding=1))
        self.text_encoder = CLIPTextEncoder(**text_encoder_cfg)
        self.decode_head = nn.Conv2d(16, 16, 1)

    def loss(self, inputs, gt_seg):
        feats = F.normalize(self.decode_head(self.image_encoder(inputs)), dim=1)
        class_embeds = self.text_encoder()  # (num_classes + bg, C)
        seg_logits = torch.einsum('bchw,kc->bkhw', feats, class_embeds)
        return {'loss_ce': F.cross_entropy(seg_logits, gt_seg)}


class OptimWrapper:
    def __init__(self, optimizer):
        self.optimizer = optimizer

    def update_params(self, loss):
        loss.backward()
        self.optimizer.step()
        self.optimizer.zero_grad()


def parse_losses(losses):
    return sum(v for k, v in losses.items() if 'loss' in k)


def train(cfg, max_iters=3):
    model = MultimodalEncoderDecoder(cfg['text_encoder'])
    optim_wrapper = OptimWrapper(torch.optim.AdamW(model.parameters(), lr=1e-4))
    for it in range(max_iters):
        inputs = torch.randn(2, 3, 8, 8)
        gt_seg = torch.randint(0, 5, (2, 8, 8))
        losses = model.loss(inputs, gt_seg)
        loss = parse_losses(losses)
        optim_wrapper.update_params(loss)
        print(f'Iter [{it + 1}/{max_iters}] loss: {loss.item():.4f}')


if __name__ == '__main__':
    torch.manual_seed(0)
    cfg = dict(text_encoder=dict(dataset_name='cityscapes', templates='vild', cache_feature=False, cat_bg=True))
    train(cfg)
