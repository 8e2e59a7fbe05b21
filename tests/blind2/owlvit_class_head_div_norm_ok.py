# Source: https://github.com/huggingface/transformers/issues/24525
"""Fine-tuning OWL-ViT with OwlViTClassPredictionHead as fixed in PR #24529: the patch and query
embeddings are normalised out of place (image_class_embeds = image_class_embeds /
(torch.linalg.norm(...) + 1e-6)), so the tensors the norms saved are left as they were. Tiny
linear/embedding encoders stand in for the CLIP towers; a box-matching loss stands in for the
reporter's notebook."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class OwlViTClassPredictionHead(nn.Module):
    def __init__(self, vision_dim, query_dim):
        super().__init__()
        self.dense0 = nn.Linear(vision_dim, query_dim)
        self.logit_shift = nn.Linear(vision_dim, 1)
        self.logit_scale = nn.Linear(vision_dim, 1)
        self.elu = nn.ELU()

    def forward(self, image_embeds, query_embeds, query_mask=None):
        image_class_embeds = self.dense0(image_embeds)

        # Normalize image and text features
        image_class_embeds = image_class_embeds / (torch.linalg.norm(image_class_embeds, dim=-1, keepdim=True) + 1e-6)
        query_embeds = query_embeds / (torch.linalg.norm(query_embeds, dim=-1, keepdim=True) + 1e-6)

        # Get class predictions
        pred_logits = torch.einsum("...pd,...qd->...pq", image_class_embeds, query_embeds)

        # Apply a learnable shift and scale to logits
        logit_shift = self.logit_shift(image_embeds)
        logit_scale = self.logit_scale(image_embeds)
        logit_scale = self.elu(logit_scale) + 1
        pred_logits = (pred_logits + logit_shift) * logit_scale

        if query_mask is not None:
            if query_mask.ndim > 1:
                query_mask = torch.unsqueeze(query_mask, dim=-2)
            pred_logits = torch.where(query_mask == 0, torch.finfo(pred_logits.dtype).min, pred_logits)

        return (pred_logits, image_class_embeds)


class OwlViTBoxPredictionHead(nn.Module):
    def __init__(self, width, out_dim=4):
        super().__init__()
        self.dense0 = nn.Linear(width, width)
        self.dense1 = nn.Linear(width, width)
        self.gelu = nn.GELU()
        self.dense2 = nn.Linear(width, out_dim)

    def forward(self, image_features):
        output = self.gelu(self.dense0(image_features))
        output = self.gelu(self.dense1(output))
        return self.dense2(output)


class OwlViTForObjectDetection(nn.Module):
    def __init__(self, vocab=30, patch_dim=12, vision_dim=16, text_dim=8):
        super().__init__()
        self.patch_embed = nn.Linear(patch_dim, vision_dim)
        self.layer_norm = nn.LayerNorm(vision_dim)
        self.token_embed = nn.Embedding(vocab, text_dim)
        self.class_head = OwlViTClassPredictionHead(vision_dim, text_dim)
        self.box_head = OwlViTBoxPredictionHead(vision_dim)

    def forward(self, input_ids, pixel_values, attention_mask):
        image_embeds = self.layer_norm(self.patch_embed(pixel_values))       # (batch, patches, width)
        text_embeds = self.token_embed(input_ids).mean(dim=-2)                # (batch * queries, dim)
        query_embeds = text_embeds.reshape(pixel_values.shape[0], -1, text_embeds.shape[-1])
        query_mask = attention_mask[..., 0].reshape(pixel_values.shape[0], -1)
        pred_boxes = self.box_head(image_embeds).sigmoid()
        logits, class_embeds = self.class_head(image_embeds, query_embeds, query_mask)
        return logits, pred_boxes


def train_one_epoch(model, optimizer, batches):
    model.train()
    for input_ids, pixel_values, attention_mask, target_labels, target_boxes in batches:
        logits, pred_boxes = model(input_ids=input_ids, pixel_values=pixel_values, attention_mask=attention_mask)
        loss_cls = F.binary_cross_entropy_with_logits(logits.max(dim=1).values, target_labels)
        loss_box = F.l1_loss(pred_boxes[:, :1], target_boxes)
        loss = loss_cls + loss_box
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


model = OwlViTForObjectDetection()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)
batches = [(torch.randint(0, 30, (2 * 3, 5)), torch.randn(2, 9, 12), torch.ones(2 * 3, 5, dtype=torch.long),
            torch.randint(0, 2, (2, 3)).float(), torch.rand(2, 1, 4)) for _ in range(2)]
train_one_epoch(model, optimizer, batches)
