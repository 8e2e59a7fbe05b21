# Source: https://github.com/arxyzan/data2vec-pytorch/issues/22
"""data2vec-pytorch's AudioTrainer.train_step: the criterion is nn.MSELoss(reduction='none') and
the step reduces only the feature dimension, loss = criterion(x, y).sum(dim=-1).div(x.size(0)),
so the loss it backwards holds one value per masked frame (the issue: it should end with .sum()
"to convert MATRIX to SCALAR, just like the text and vision case"). A small conv + transformer
encoder and random waveforms stand in for the wav2vec2 encoder and TIMIT."""
import copy
import torch
import torch.nn as nn
import torch.nn.functional as F


class Encoder(nn.Module):
    """wav2vec2-style audio encoder returning the last output and every layer's states."""
    def __init__(self, embed_dim=16, num_layers=3):
        super().__init__()
        self.feature_extractor = nn.Sequential(nn.Conv1d(1, embed_dim, 10, stride=5), nn.GELU(),
                                               nn.Conv1d(embed_dim, embed_dim, 3, stride=2), nn.GELU())
        self.mask_emb = nn.Parameter(torch.rand(embed_dim))
        self.layers = nn.ModuleList(nn.TransformerEncoderLayer(embed_dim, 2, 32, 0.0) for _ in range(num_layers))

    def forward(self, src, mask=None):
        x = self.feature_extractor(src.unsqueeze(1)).transpose(1, 2)   # B x T x C
        if mask is not None:
            x = torch.where(mask.unsqueeze(-1), self.mask_emb.to(x.dtype), x)
        states = []
        x = x.transpose(0, 1)                                           # T x B x C
        for layer in self.layers:
            x = layer(x)
            states.append(x)
        return {'encoder_out': x.transpose(0, 1), 'encoder_states': states}


class EMA:
    def __init__(self, model, decay=0.999):
        self.model = copy.deepcopy(model)
        self.model.requires_grad_(False)
        self.decay = decay
        self.num_updates = 0

    @torch.no_grad()
    def step(self, new_model):
        for ema_param, param in zip(self.model.parameters(), new_model.parameters()):
            ema_param.mul_(self.decay).add_(param, alpha=1 - self.decay)
        self.num_updates += 1


class Data2Vec(nn.Module):
    def __init__(self, encoder, embed_dim=16, average_top_k_layers=2):
        super().__init__()
        self.encoder = encoder
        self.ema = EMA(self.encoder)
        self.average_top_k_layers = average_top_k_layers
        self.regression_head = nn.Linear(embed_dim, embed_dim)

    def ema_step(self):
        self.ema.step(self.encoder)

    def forward(self, src, trg, mask):
        x = self.encoder(src, mask)['encoder_out']
        with torch.no_grad():
            self.ema.model.eval()
            y = self.ema.model(trg)['encoder_states']
            y = y[-self.average_top_k_layers:]
            y = [tl.permute(1, 2, 0) for tl in y]                # B x C x T
            y = [F.instance_norm(tl.float()) for tl in y]
            y = [tl.transpose(1, 2) for tl in y]                 # B x T x C
            y = sum(y) / len(y)
        x = x[mask]
        y = y[mask]
        x = self.regression_head(x)
        return x, y


class AudioTrainer:
    def __init__(self):
        self.model = Data2Vec(Encoder())
        self.optimizer = torch.optim.Adam(self.model.parameters(), 2e-4)
        self.criterion = nn.MSELoss(reduction='none')
        self.train_loader = [(torch.randn(2, 160), torch.rand(2, 15) < 0.5) for _ in range(2)]

    def train_step(self, batch):
        src, mask = batch
        # src is not masked so can be used as trg. (src will be masked in the encoder forward)
        x, y = self.model(src, src, mask)
        loss = self.criterion(x.float(), y.float()).sum(dim=-1).div(x.size(0))
        loss.backward()  # expect: GG105
        self.optimizer.step()
        self.optimizer.zero_grad()

        return loss.item()

    def train_epoch(self, epoch_num):
        self.model.train()
        losses = []
        for batch in self.train_loader:
            losses.append(self.train_step(batch))
            self.model.ema_step()
        return sum(losses) / len(losses)


AudioTrainer().train_epoch(1)
