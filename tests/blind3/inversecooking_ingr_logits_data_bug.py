# Source: https://github.com/facebookresearch/inversecooking/issues/3
"""Training the ingredient decoder of Inverse Cooking (facebookresearch/inversecooking, first
stage, --ingrs_only): InverseCookingModel.forward decodes ingredients with
DecoderTransformer.sample, which returns `logits = torch.stack(logits, 1).data`; every
ingredient loss (ingr_loss, eos_loss, card_penalty) is computed from those detached logits, and
with no recipe loss in this stage train.py's loss.backward() fails ("Requires_grad is False ...
The training cannot do the backward.loss process"; fixed by 3ab629c). The ResNet image encoder
and the transformer layers are reduced to a conv encoder and one cross-attention step, and random
images/ingredient lists stand in for Recipe1M; label2onehot, mask_from_eos and the training
step's loss bookkeeping follow the repository."""
import torch
import torch.nn as nn

device = torch.device('cpu')


def label2onehot(labels, pad_value):
    inp_ = torch.unsqueeze(labels, 2)
    one_hot = torch.FloatTensor(labels.size(0), labels.size(1), pad_value + 1).zero_().to(device)
    one_hot.scatter_(2, inp_, 1)
    one_hot, _ = one_hot.max(dim=1)
    one_hot = one_hot[:, :-1]  # remove pad position
    one_hot[:, 0] = 0  # eos position is always 0
    return one_hot


def mask_from_eos(ids, eos_value, mult_before=True):
    mask = torch.ones(ids.size()).to(device).byte()
    mask_aux = torch.ones(ids.size(0)).to(device).byte()
    for idx in range(ids.size(1)):
        if idx == 0:
            continue
        if mult_before:
            mask[:, idx] = mask[:, idx] * mask_aux
            mask_aux = mask_aux * (ids[:, idx] != eos_value)
        else:
            mask_aux = mask_aux * (ids[:, idx] != eos_value)
            mask[:, idx] = mask[:, idx] * mask_aux
    return mask


class EncoderCNN(nn.Module):
    def __init__(self, embed_size, dropout=0.5):
        super().__init__()
        self.resnet = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.ReLU(), nn.Conv2d(8, 8, 3, stride=2, padding=1))
        self.linear = nn.Sequential(nn.Conv2d(8, embed_size, kernel_size=1, padding=0), nn.Dropout2d(dropout))

    def forward(self, images, keep_cnn_gradients=False):
        if keep_cnn_gradients:
            raw_conv_feats = self.resnet(images)
        else:
            with torch.no_grad():
                raw_conv_feats = self.resnet(images)
        features = self.linear(raw_conv_feats)
        return features.view(features.size(0), features.size(1), -1)


class DecoderTransformer(nn.Module):
    def __init__(self, embed_size, vocab_size, seq_length=5, attention_nheads=2):
        super().__init__()
        self.seq_length = seq_length
        self.embed_tokens = nn.Embedding(vocab_size, embed_size)
        self.attn = nn.MultiheadAttention(embed_size, attention_nheads, batch_first=True)
        self.layer_norm = nn.LayerNorm(embed_size)
        self.linear = nn.Linear(embed_size, vocab_size - 1)

    def forward(self, ingr_features, ingr_mask, captions, img_features, incremental_state=None):
        x = self.embed_tokens(captions[:, -1:])
        img = img_features.permute(0, 2, 1)
        x = self.layer_norm(x + self.attn(x, img, img)[0])
        return self.linear(x), None

    def sample(self, ingr_features, ingr_mask, greedy=True, temperature=1.0, beam=-1,
               img_features=None, first_token_value=0, replacement=True, last_token_value=0):
        incremental_state = {}
        fs = img_features.size(0)
        first_word = torch.ones(fs)*first_token_value
        first_word = first_word.to(device).long()
        sampled_ids = [first_word]
        logits = []

        for i in range(self.seq_length):
            outputs, _ = self.forward(ingr_features, ingr_mask, torch.stack(sampled_ids, 1),
                                      img_features, incremental_state)
            outputs = outputs.squeeze(1)
            if not replacement:
                if i == 0:
                    predicted_mask = torch.zeros(outputs.shape).float().to(device)
                else:
                    # ensure no repetitions in sampling if replacement==False
                    batch_ind = [j for j in range(fs) if sampled_ids[i][j] != 0]
                    sampled_ids_new = sampled_ids[i][batch_ind]
                    predicted_mask[batch_ind, sampled_ids_new] = float('-inf')
                outputs += predicted_mask

            logits.append(outputs)
            outputs_prob = torch.nn.functional.softmax(outputs, dim=-1)
            _, predicted = outputs_prob.max(1)
            predicted = predicted.detach()
            sampled_ids.append(predicted)

        sampled_ids = torch.stack(sampled_ids[1:], 1)
        logits = torch.stack(logits, 1).data

        return sampled_ids, logits


def softIoU(out, target, e=1e-6, sum_axis=1):
    num = (out*target).sum(sum_axis, True)
    den = (out+target-out*target).sum(sum_axis, True) + e
    return num / den


class InverseCookingModel(nn.Module):
    def __init__(self, image_encoder, ingr_decoder, crit_ingr, crit_eos, pad_value=0, label_smoothing=0.0):
        super(InverseCookingModel, self).__init__()
        self.image_encoder = image_encoder
        self.ingredient_decoder = ingr_decoder
        self.crit_ingr = crit_ingr
        self.crit_eos = crit_eos
        self.pad_value = pad_value
        self.label_smoothing = label_smoothing

    def forward(self, img_inputs, target_ingrs, keep_cnn_gradients=False):
        img_features = self.image_encoder(img_inputs, keep_cnn_gradients)

        losses = {}
        target_one_hot = label2onehot(target_ingrs, self.pad_value)
        target_one_hot_smooth = label2onehot(target_ingrs, self.pad_value)
        target_one_hot_smooth[target_one_hot_smooth == 1] = (1-self.label_smoothing)
        target_one_hot_smooth[target_one_hot_smooth == 0] = self.label_smoothing / target_one_hot_smooth.size(-1)

        # autoregressive mode for ingredient decoder
        ingr_ids, ingr_logits = self.ingredient_decoder.sample(None, None, greedy=True,
                                                               temperature=1.0, img_features=img_features,
                                                               first_token_value=0, replacement=False)
        ingr_logits = torch.nn.functional.softmax(ingr_logits, dim=-1)

        # eos probability is the one assigned to the first position of the softmax
        eos = ingr_logits[:, :, 0]
        target_eos = ((target_ingrs == 0) ^ (target_ingrs == self.pad_value))
        eos_pos = (target_ingrs == 0)
        eos_head = ((target_ingrs != self.pad_value) & (target_ingrs != 0))

        # select transformer steps to pool from
        mask_perminv = mask_from_eos(target_ingrs, eos_value=0, mult_before=False)
        ingr_probs = ingr_logits * mask_perminv.float().unsqueeze(-1)
        ingr_probs, _ = torch.max(ingr_probs, dim=1)

        # ignore predicted ingredients after eos in ground truth
        ingr_ids[mask_perminv == 0] = self.pad_value

        ingr_loss = self.crit_ingr(ingr_probs, target_one_hot_smooth)
        losses['ingr_loss'] = torch.mean(ingr_loss, dim=-1)
        losses['card_penalty'] = torch.abs((ingr_probs*target_one_hot).sum(1) - target_one_hot.sum(1)) + \
            torch.abs((ingr_probs*(1-target_one_hot)).sum(1))

        eos_loss = self.crit_eos(eos, target_eos.float())
        mult = 1/2
        losses['eos_loss'] = mult*(eos_loss * eos_pos.float()).sum(1) / (eos_pos.float().sum(1) + 1e-6) + \
            mult*(eos_loss * eos_head.float()).sum(1) / (eos_head.float().sum(1) + 1e-6)
        pred_one_hot = label2onehot(ingr_ids, self.pad_value)
        losses['iou'] = softIoU(pred_one_hot, target_one_hot)
        return losses


ingr_vocab_size, maxnumlabels = 12, 5
loss_weight = [0.0, 1000.0, 1.0, 1.0]  # ingredients-only stage
model = InverseCookingModel(EncoderCNN(16), DecoderTransformer(16, ingr_vocab_size, seq_length=maxnumlabels),
                            crit_ingr=nn.BCELoss(reduction='none'), crit_eos=nn.BCELoss(reduction='none'),
                            pad_value=ingr_vocab_size-1)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-4)

model.train()
for i in range(2):
    img_inputs = torch.randn(2, 3, 16, 16)
    ingr_gt = torch.tensor([[3, 5, 0, 11, 11], [2, 7, 9, 0, 11]])
    losses = model(img_inputs, ingr_gt)
    recipe_loss = 0
    ingr_loss = losses['ingr_loss'].mean()
    eos_loss = losses['eos_loss'].mean()
    card_penalty = losses['card_penalty'].mean()
    loss = loss_weight[0] * recipe_loss + loss_weight[1] * ingr_loss \
        + loss_weight[2]*eos_loss + loss_weight[3]*card_penalty

    model.zero_grad()
    loss.backward()  # expect: GG104
    optimizer.step()
