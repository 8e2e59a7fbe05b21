# Source: https://github.com/ibm-aur-nlp/EDD/issues/4
"""EDD (encoder-dual-decoder for table recognition, train_dual_decoder.py + models.py):
a ResNet encoder, a tag decoder and an optional cell decoder / bbox regressor, each with
its own optimizer, trained by DualDecoder.train_epoch.

train_dual_decoder.py freezes parts according to flags: `encoder.fine_tune(
args.fine_tune_encoder)` and `decoder.fine_tune_tag_decoder(args.fine_tune_tag_decoder)`
set `requires_grad` of every parameter to the flag, and the cell decoder / bbox regressor
are only used with --predict_content / --predict_bbox. All four flags default to False,
so when the script is run with its defaults every parameter that reaches the loss is
frozen, the loss (tag loss only) has no grad_fn, and `loss.backward()` raises "element 0
of tensors does not require grad and does not have a grad_fn" (the issue).

This is the fixed twin; the issue got no answer, the right fix is to train something: run with
--fine_tune_tag_decoder (so `fine_tune_tag_decoder(True)` keeps the tag decoder
trainable and its optimizer is created). The ResNet, the dataset and the attention LSTM
are small stand-ins with the same structure.
"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence

device = torch.device("cpu")


class AverageMeter(object):
    def __init__(self):
        self.val = self.avg = self.sum = self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


def accuracy(scores, targets, k):
    batch_size = targets.size(0)
    _, ind = scores.topk(k, 1, True, True)
    correct = ind.eq(targets.view(-1, 1).expand_as(ind))
    return correct.view(-1).float().sum().item() * (100.0 / batch_size)


class Encoder(nn.Module):
    def __init__(self, encoded_image_size=4):
        super(Encoder, self).__init__()
        self.resnet = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(),
                                    nn.Conv2d(8, 16, 3, padding=1), nn.ReLU())
        self.adaptive_pool = nn.AdaptiveAvgPool2d((encoded_image_size, encoded_image_size))

    def forward(self, images):
        out = self.adaptive_pool(self.resnet(images))  # (batch_size, 16, 4, 4)
        return out.permute(0, 2, 3, 1).flatten(1, 2)  # (batch_size, num_pixels, encoder_dim)

    def fine_tune(self, fine_tune=True):
        for p in self.resnet.parameters():
            p.requires_grad = fine_tune


class TagDecoder(nn.Module):
    def __init__(self, vocab_size, encoder_dim=16, embed_dim=8, decoder_dim=16):
        super(TagDecoder, self).__init__()
        self.embedding = nn.Embedding(vocab_size, embed_dim)
        self.att = nn.Linear(encoder_dim + decoder_dim, 1)
        self.init_h = nn.Linear(encoder_dim, decoder_dim)
        self.init_c = nn.Linear(encoder_dim, decoder_dim)
        self.decode_step = nn.LSTMCell(embed_dim + encoder_dim, decoder_dim)
        self.fc = nn.Linear(decoder_dim, vocab_size)

    def forward(self, encoder_out, encoded_tags_sorted, tag_lens):
        batch_size, num_pixels, _ = encoder_out.shape
        embeddings = self.embedding(encoded_tags_sorted)
        mean_encoder_out = encoder_out.mean(dim=1)
        h, c = self.init_h(mean_encoder_out), self.init_c(mean_encoder_out)
        decode_lengths = (tag_lens - 1).tolist()
        T = max(decode_lengths)
        predictions = torch.zeros(batch_size, T, self.fc.out_features)
        alphas = torch.zeros(batch_size, T, num_pixels)
        for t in range(T):
            e = self.att(torch.cat([encoder_out, h.unsqueeze(1).expand(-1, num_pixels, -1)], 2)).squeeze(2)
            alpha = F.softmax(e, dim=1)
            context = (encoder_out * alpha.unsqueeze(2)).sum(dim=1)
            h, c = self.decode_step(torch.cat([embeddings[:, t, :], context], dim=1), (h, c))
            predictions[:, t, :] = self.fc(h)
            alphas[:, t, :] = alpha
        return predictions, decode_lengths, alphas


class DualDecoder(nn.Module):
    def __init__(self, tag_vocab_size, predict_content=False, predict_bbox=False):
        super(DualDecoder, self).__init__()
        self.tag_decoder = TagDecoder(tag_vocab_size)
        self.cell_decoder = nn.Linear(16, 10)         # only used with --predict_content
        self.cell_bbox_regressor = nn.Linear(16, 4)   # only used with --predict_bbox
        self.predict_content = predict_content
        self.predict_bbox = predict_bbox
        self.relu_tag = nn.ReLU()

    def fine_tune_tag_decoder(self, fine_tune=False):
        for p in self.tag_decoder.parameters():
            p.requires_grad = fine_tune

    def forward(self, encoder_out, encoded_tags_sorted, tag_lens, cells=None, cell_lens=None, num_cells=None):
        return self.tag_decoder(encoder_out, encoded_tags_sorted, tag_lens)

    def train_epoch(self, train_loader, encoder, criterion, encoder_optimizer, tag_decoder_optimizer,
                    cell_decoder_optimizer, cell_bbox_regressor_optimizer, epoch, args):
        self.train()
        encoder.train()
        losses_tag = AverageMeter()
        top1accs_tag = AverageMeter()
        for i, batch in enumerate(train_loader):
            imgs, tags, tag_lens, num_cells = batch[:4]
            cells = None
            cell_lens = None

            # Forward prop.
            imgs = encoder(imgs)
            tag_lens = tag_lens.squeeze(1)
            tag_lens, sort_ind = tag_lens.sort(dim=0, descending=True)
            imgs = imgs[sort_ind]
            tags_sorted = tags[sort_ind]
            num_cells = num_cells[sort_ind]

            output = self(imgs, tags_sorted, tag_lens, cells, cell_lens, num_cells)
            scores_tag, decode_lengths_tag, alphas_tag = output[:3]

            # Calculate tag loss
            targets_tag = tags_sorted[:, 1:]
            scores_tag = pack_padded_sequence(scores_tag, decode_lengths_tag, batch_first=True)[0]
            targets_tag = pack_padded_sequence(targets_tag, decode_lengths_tag, batch_first=True)[0]
            loss_tag = criterion['tag'](scores_tag, targets_tag)
            loss_tag += args.alpha_tag * (self.relu_tag(1. - alphas_tag.sum(dim=1)) ** 2).mean()
            loss = args.tag_loss_weight * loss_tag
            top1_tag = accuracy(scores_tag, targets_tag, 1)
            tag_count = sum(decode_lengths_tag)
            losses_tag.update(loss_tag.item(), tag_count)
            top1accs_tag.update(top1_tag, tag_count)

            # Back prop.
            if encoder_optimizer is not None:
                encoder_optimizer.zero_grad()
            if tag_decoder_optimizer is not None:
                tag_decoder_optimizer.zero_grad()
            if self.predict_content:
                cell_decoder_optimizer.zero_grad()
            if self.predict_bbox:
                cell_bbox_regressor_optimizer.zero_grad()
            loss.backward()

            # Update weights
            if encoder_optimizer is not None:
                encoder_optimizer.step()
            if tag_decoder_optimizer is not None:
                tag_decoder_optimizer.step()
            print('Epoch: [{0}][{1}/{2}]\tLoss_tag {3:.4f}\tTop-1 accuracy (tags) {4:.3f}'.format(
                epoch, i, len(train_loader), losses_tag.avg, top1accs_tag.avg))


def main(args):
    tag_vocab_size = 12
    encoder = Encoder()
    encoder.fine_tune(args.fine_tune_encoder)
    encoder_optimizer = torch.optim.Adam(params=filter(lambda p: p.requires_grad, encoder.parameters()),
                                         lr=args.encoder_lr) if args.fine_tune_encoder else None
    decoder = DualDecoder(tag_vocab_size, predict_content=args.predict_content, predict_bbox=args.predict_bbox)
    decoder.fine_tune_tag_decoder(args.fine_tune_tag_decoder)
    tag_decoder_optimizer = torch.optim.Adam(params=filter(lambda p: p.requires_grad, decoder.tag_decoder.parameters()),
                                             lr=args.tag_decoder_lr) if args.fine_tune_tag_decoder else None
    cell_decoder_optimizer = torch.optim.Adam(params=filter(lambda p: p.requires_grad, decoder.cell_decoder.parameters()),
                                              lr=args.cell_decoder_lr) if args.predict_content else None
    cell_bbox_regressor_optimizer = torch.optim.Adam(params=filter(lambda p: p.requires_grad, decoder.cell_bbox_regressor.parameters()),
                                                     lr=args.cell_bbox_regressor_lr) if args.predict_bbox else None
    criterion = {'tag': nn.CrossEntropyLoss()}

    # stand-in for the PubTabNet loader: (imgs, tags, tag_lens, num_cells)
    train_loader = []
    for _ in range(2):
        tag_lens = torch.tensor([[6], [5], [4]])
        train_loader.append((torch.randn(3, 3, 8, 8), torch.randint(0, tag_vocab_size, (3, 6)),
                             tag_lens, torch.tensor([2, 2, 1])))
    for epoch in range(args.epochs):
        decoder.train_epoch(train_loader, encoder, criterion, encoder_optimizer, tag_decoder_optimizer,
                            cell_decoder_optimizer, cell_bbox_regressor_optimizer, epoch, args)


if __name__ == '__main__':
    torch.manual_seed(0)
    parser = argparse.ArgumentParser(description='Train encoder-dual-decoder table recognition model')
    parser.add_argument('--epochs', default=1, type=int)
    parser.add_argument('--encoder_lr', default=0.001, type=float)
    parser.add_argument('--tag_decoder_lr', default=0.001, type=float)
    parser.add_argument('--cell_decoder_lr', default=0.001, type=float)
    parser.add_argument('--cell_bbox_regressor_lr', default=0.001, type=float)
    parser.add_argument('--alpha_tag', default=0.0, type=float)
    parser.add_argument('--tag_loss_weight', default=0.5, type=float, help='weight of tag loss')
    parser.add_argument('--fine_tune_encoder', dest='fine_tune_encoder', action='store_true', help='fine-tune encoder')
    parser.add_argument('--fine_tune_tag_decoder', dest='fine_tune_tag_decoder', action='store_true', help='fine-tune tag decoder')
    parser.add_argument('--predict_content', dest='predict_content', default=False, action='store_true')
    parser.add_argument('--predict_bbox', dest='predict_bbox', default=False, action='store_true')
    args = parser.parse_args(['--fine_tune_tag_decoder'])
    main(args)
