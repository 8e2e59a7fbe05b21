# Source: https://github.com/official-stockfish/nnue-pytorch/pull/75
"""nnue-pytorch's NNUE model with the PR's fix: the virtual feature weights are zeroed inside
torch.no_grad(), so the in-place write into the nn.Parameter is not recorded by autograd and the
model trains. pytorch_lightning, ranger, the feature set and the data are small stand-ins.
"""
from collections import namedtuple

import torch
from torch import nn
import torch.nn.functional as F

# 3 layer fully connected network
L1 = 64
L2 = 8
L3 = 8

QTensor = namedtuple('QTensor', ['tensor', 'scale'])


def quantize_tensor(x, dtype=torch.int8, scale=127.0, min_max=None):
    if min_max is not None:
        q_x = x.clamp(min_max[0], min_max[1])
    else:
        q_x = x
    q_x = (q_x * scale).round().to(dtype)
    return QTensor(tensor=q_x, scale=scale)


def dequantize_tensor(q_x):
    return q_x.tensor.float() / q_x.scale


class FakeQuantOp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, dtype=torch.int8, scale=127.0, min_max=None):
        x = quantize_tensor(x, dtype=dtype, scale=scale, min_max=min_max)
        x = dequantize_tensor(x)
        return x

    @staticmethod
    def backward(ctx, grad_output):
        # straight through estimator
        return grad_output, None, None, None


class FeatureBlock:
    def __init__(self, name, num_real_features, factors):
        self.name = name
        self.num_real_features = num_real_features
        self.factors = factors
        self.num_virtual_features = sum(factors.values()) - num_real_features
        self.num_features = num_real_features + self.num_virtual_features


class FeatureSet:
    """Stand-in for features.FeatureSet with a single factorized HalfKP^ block."""
    def __init__(self, features):
        self.features = features
        self.name = '+'.join(f.name for f in features)
        self.num_real_features = sum(f.num_real_features for f in features)
        self.num_virtual_features = sum(f.num_virtual_features for f in features)
        self.num_features = sum(f.num_features for f in features)

    def get_virtual_feature_ranges(self):
        ranges = []
        offset = 0
        for feature in self.features:
            if feature.num_virtual_features:
                ranges.append((offset + feature.num_real_features, offset + feature.num_features))
            offset += feature.num_features
        return ranges


class LightningModule(nn.Module):
    """Stand-in for pytorch_lightning.LightningModule."""
    def log(self, name, value):
        self.logged = {name: float(value)}


class NNUE(LightningModule):
    """
    This model attempts to directly represent the nodchip Stockfish trainer methodology.

    lambda_ = 0.0 - purely based on game results
    lambda_ = 1.0 - purely based on search scores
    """
    def __init__(self, feature_set, lambda_=1.0):
        super(NNUE, self).__init__()
        self.input = nn.Linear(feature_set.num_features, L1)
        self.feature_set = feature_set
        self.l1 = nn.Linear(2 * L1, L2)
        self.l2 = nn.Linear(L2, L3)
        self.output = nn.Linear(L3, 1)
        self.lambda_ = lambda_

        self._zero_virtual_feature_weights()

    '''
    We zero all virtual feature weights because during serialization to .nnue
    we compute weights for each real feature as being the sum of the weights for
    the real feature in question and the virtual features it can be factored to.
    '''
    def _zero_virtual_feature_weights(self):
        weights = self.input.weight
        with torch.no_grad():
            for a, b in self.feature_set.get_virtual_feature_ranges():
                weights[a:b, :] = 0.0
        self.input.weight = nn.Parameter(weights)

    def forward(self, us, them, w_in, b_in):
        return self.quant_forward(us, them, w_in, b_in)

    def quant_fc(self, layer, x, is_output=False):
        l_w = layer.weight.data
        l_b = layer.bias.data
        if not is_output:
            bias_scale = 8128
        else:
            bias_scale = 9600
        layer.weight.data = FakeQuantOp.apply(l_w, torch.int8, bias_scale / 127.0, (-127.0 / 64.0, 127.0 / 64.0))
        layer.bias.data = FakeQuantOp.apply(l_b, torch.int32, bias_scale)
        result = layer(x)
        layer.weight.data = l_w
        layer.bias.data = l_b
        return result

    def quant_forward(self, us, them, w_in, b_in):
        input_w = self.input.weight.data
        input_b = self.input.bias.data
        self.input.weight.data = FakeQuantOp.apply(input_w, torch.int16, 127.0)
        self.input.bias.data = FakeQuantOp.apply(input_b, torch.int16, 127.0)
        w = self.input(w_in)
        b = self.input(b_in)
        self.input.weight.data = input_w
        self.input.bias.data = input_b

        l0_ = (us * torch.cat([w, b], dim=1)) + (them * torch.cat([b, w], dim=1))
        # clamp here is used as a clipped relu to (0.0, 1.0)
        l0_ = torch.clamp(l0_, 0.0, 1.0)
        l1_ = torch.clamp(self.quant_fc(self.l1, l0_), 0.0, 1.0)
        l2_ = torch.clamp(self.quant_fc(self.l2, l1_), 0.0, 1.0)
        x = self.quant_fc(self.output, l2_, is_output=True)
        return x

    def step_(self, batch, batch_idx, loss_type):
        us, them, white, black, outcome, score = batch
        nnue2score = 600
        scaling = 361

        q = self(us, them, white, black) * nnue2score / scaling
        t = outcome
        p = (score / scaling).sigmoid()

        epsilon = 1e-12
        teacher_entropy = -(p * (p + epsilon).log() + (1.0 - p) * (1.0 - p + epsilon).log())
        outcome_entropy = -(t * (t + epsilon).log() + (1.0 - t) * (1.0 - t + epsilon).log())
        teacher_loss = -(p * F.logsigmoid(q) + (1.0 - p) * F.logsigmoid(-q))
        outcome_loss = -(t * F.logsigmoid(q) + (1.0 - t) * F.logsigmoid(-q))
        result = self.lambda_ * teacher_loss + (1.0 - self.lambda_) * outcome_loss
        entropy = self.lambda_ * teacher_entropy + (1.0 - self.lambda_) * outcome_entropy
        loss = result.mean() - entropy.mean()
        self.log(loss_type, loss)
        return loss

    def training_step(self, batch, batch_idx):
        return self.step_(batch, batch_idx, 'train_loss')

    def configure_optimizers(self):
        # ranger.Ranger stand-in
        optimizer = torch.optim.Adam(self.parameters(), betas=(.9, 0.999), eps=1.0e-7)
        scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=75, gamma=0.3)
        return [optimizer], [scheduler]


def make_batch(feature_set, n=8):
    def sparse_features():
        x = torch.zeros(n, feature_set.num_features)
        x[torch.arange(n).repeat_interleave(3), torch.randint(0, feature_set.num_real_features, (3 * n,))] = 1.0
        return x
    us = torch.randint(0, 2, (n, 1)).float()
    return us, 1.0 - us, sparse_features(), sparse_features(), torch.randint(0, 3, (n, 1)).float() / 2, \
        torch.randn(n, 1) * 300


class Trainer:
    """Stand-in for pl.Trainer.fit: plain optimisation loop over the training batches."""
    def __init__(self, max_epochs):
        self.max_epochs = max_epochs

    def fit(self, model, batches):
        [optimizer], [scheduler] = model.configure_optimizers()
        for epoch in range(self.max_epochs):
            for batch_idx, batch in enumerate(batches):
                loss = model.training_step(batch, batch_idx)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            scheduler.step()


feature_set = FeatureSet([FeatureBlock('HalfKP^', 40, {'HalfKP': 40, 'HalfK': 4, 'P': 4})])
nnue = NNUE(feature_set)
trainer = Trainer(max_epochs=1)
trainer.fit(nnue, [make_batch(feature_set) for _ in range(2)])
