# Source: https://github.com/mindee/doctr/pull/379
"""Training docTR's PyTorch SAR text recognizer with the PR's fix: SAR.compute_loss returns
ce_loss.mean(), the batch's mean word loss, a scalar, so fit_one_epoch's train_loss.backward()
runs. A two-conv backbone stands in for vgg16_bn/resnet31, the vocabulary is lowercase letters,
and random images with random words stand in for the dataset; the model keeps the repository's
shapes (features of width 32, the encoder LSTM reading channels as steps)."""
import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

VOCAB = "abcdefghijklmnopqrstuvwxyz"


def encode_sequences(sequences, vocab, target_size, eos):
    """Encode character sequences using a given vocab as mapping (padded with eos)"""
    encoded_data = np.full([len(sequences), target_size], eos, dtype=np.int32)
    for idx, seq in enumerate(sequences):
        encoded_seq = [vocab.index(char) for char in seq]
        encoded_data[idx, :min(len(encoded_seq), target_size)] = encoded_seq[:target_size]
    return encoded_data


class AttentionModule(nn.Module):

    def __init__(self, feat_chans, state_chans, attention_units):
        super().__init__()
        self.feat_conv = nn.Conv2d(feat_chans, attention_units, 3, padding=1)
        self.state_conv = nn.Conv2d(state_chans, attention_units, 1, bias=False)
        self.attention_projector = nn.Conv2d(attention_units, 1, 1, bias=False)

    def forward(self, features, hidden_state):
        feat_projection = self.feat_conv(features)
        state_projection = self.state_conv(hidden_state)
        projection = torch.tanh(feat_projection + state_projection)
        attention = self.attention_projector(projection)
        attention = torch.flatten(attention, 1)
        attention = torch.softmax(attention, 1).reshape(-1, 1, features.shape[-2], features.shape[-1])
        glimpse = (features * attention).sum(dim=(2, 3))
        return glimpse


class SARDecoder(nn.Module):
    def __init__(self, rnn_units, max_length, vocab_size, embedding_units, attention_units,
                 num_decoder_layers=2, feat_chans=16):
        super().__init__()
        self.vocab_size = vocab_size
        self.lstm_cells = nn.ModuleList([nn.LSTMCell(rnn_units, rnn_units) for _ in range(num_decoder_layers)])
        self.embed = nn.Linear(self.vocab_size + 1, embedding_units, bias=False)
        self.attention_module = AttentionModule(feat_chans, rnn_units, attention_units)
        self.output_dense = nn.Linear(rnn_units + feat_chans, vocab_size + 1)
        self.max_length = max_length

    def forward(self, features, holistic, gt=None):
        hx = [None, None]
        symbol = torch.zeros((features.shape[0], self.vocab_size + 1), device=features.device)
        logits_list = []
        for t in range(self.max_length + 1):  # keep 1 step for <eos>
            embeded_symbol = self.embed(symbol)
            hx[0] = self.lstm_cells[0](embeded_symbol, hx[0])
            hx[1] = self.lstm_cells[1](hx[0][0], hx[1])
            logits, _ = hx[1]
            glimpse = self.attention_module(features, logits.unsqueeze(-1).unsqueeze(-1))
            logits = torch.cat([logits, glimpse], 1)
            logits = self.output_dense(logits)
            if gt is not None:
                _symbol = gt[:, t]
            else:
                _symbol = logits.argmax(-1)
            symbol = F.one_hot(_symbol, self.vocab_size + 1).to(dtype=torch.float32)
            logits_list.append(logits)
        outputs = torch.stack(logits_list, 1)
        return outputs


class SAR(nn.Module):
    def __init__(self, feature_extractor, vocab, rnn_units=16, embedding_units=16, attention_units=16,
                 max_length=6, num_decoders=2, dropout_prob=0.):
        super().__init__()
        self.vocab = vocab
        self.max_length = max_length + 1  # Add 1 timestep for EOS after the longest word
        self.feat_extractor = feature_extractor
        self.encoder = nn.LSTM(32, rnn_units, 2, batch_first=True, dropout=dropout_prob)
        self.decoder = SARDecoder(rnn_units, max_length, len(vocab), embedding_units, attention_units,
                                  num_decoders, 16)

    def compute_target(self, gts):
        encoded = encode_sequences(sequences=gts, vocab=self.vocab, target_size=self.max_length,
                                   eos=len(self.vocab))
        seq_len = [len(word) for word in gts]
        return encoded, seq_len

    def forward(self, x, target=None, return_model_output=False):
        features = self.feat_extractor(x)
        pooled_features = features.max(dim=-2).values  # vertical max pooling
        _, (encoded, _) = self.encoder(pooled_features)
        encoded = encoded[-1]
        if target is not None:
            _gt, _seq_len = self.compute_target(target)
            gt, seq_len = torch.from_numpy(_gt).to(dtype=torch.long), torch.tensor(_seq_len)
        decoded_features = self.decoder(features, encoded, gt=None if target is None else gt)

        out = {}
        if return_model_output:
            out["out_map"] = decoded_features
        if target is not None:
            out['loss'] = self.compute_loss(decoded_features, gt, seq_len)
        return out

    def compute_loss(self, model_output, gt, seq_len):
        """Compute categorical cross-entropy loss for the model.
        Sequences are masked after the EOS character."""
        input_len = model_output.shape[1]
        seq_len = seq_len + 1
        cce = F.cross_entropy(model_output.permute(0, 2, 1), gt, reduction='none')
        mask_2d = torch.arange(input_len, device=model_output.device)[None, :] < seq_len[:, None]
        cce[mask_2d] = 0

        ce_loss = cce.sum(1) / seq_len.to(dtype=torch.float32)
        return ce_loss.mean()


def fit_one_epoch(model, train_loader, optimizer):
    model.train()
    train_iter = iter(train_loader)
    for _ in range(len(train_loader)):
        images, targets = next(train_iter)
        train_loss = model(images, targets)['loss']

        optimizer.zero_grad()
        train_loss.backward()
        optimizer.step()
        print(f'Training loss: {train_loss.item():.6}')


backbone = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(8, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2))
model = SAR(backbone, VOCAB)
optimizer = torch.optim.Adam(model.parameters(), 1e-3)
rng = np.random.default_rng(0)
train_loader = [(torch.rand(2, 3, 16, 128), [''.join(rng.choice(list(VOCAB), rng.integers(2, 6))) for _ in range(2)])
                for _ in range(2)]
fit_one_epoch(model, train_loader, optimizer)
