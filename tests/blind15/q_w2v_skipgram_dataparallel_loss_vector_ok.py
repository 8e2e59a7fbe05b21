# Source: https://github.com/lonePatient/chinese-word2vec-pytorch/issues/1
"""Fixed twin of q_w2v_skipgram_dataparallel_loss_vector_bug.py. chinese-word2vec-pytorch wraps the
SkipGram model in `nn.DataParallel` on several GPUs; the replicas' 0-d negative-sampling losses are
gathered into a vector and `loss.backward()` raised. Fix (the maintainer's answer in the thread):
`if len(n_gpus) > 1: loss = loss.mean()` before the backward (here `self.n_gpu`, the list of GPU
ids). DataParallel, the GPU probing, the corpus iterator, the progress bar and the logger are small
stand-ins written in the file.
"""
import logging
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

logger = logging.getLogger("word2vec")

# ----------------------------- stand-ins: DataParallel, progress bar, corpus -----------------------------


class DataParallel(nn.Module):
    """CPU stand-in for torch.nn.DataParallel: scatter the batch over the replicas, gather dim 0."""

    def __init__(self, module, device_ids=None):
        super().__init__()
        self.module, self.device_ids = module, list(device_ids)

    def forward(self, *inputs):
        chunks = [x.chunk(len(self.device_ids)) for x in inputs]
        outputs = [self.module(*args) for args in zip(*chunks)]
        if outputs[0].dim() == 0:  # "all input tensors were scalars; will instead unsqueeze and return a vector"
            return torch.stack(outputs)
        return torch.cat(outputs, 0)


class ProgressBar(object):
    def __init__(self, n_batch, loss_name='loss'):
        self.n_batch, self.loss_name = n_batch, loss_name

    def step(self, batch_idx, loss, use_time):
        print('[%d/%d] %s: %.4f - %.3fs' % (batch_idx, self.n_batch, self.loss_name, loss, use_time))


class DataLoader(object):
    """Skip-gram pairs with negative samples (word ids), as pyword2vec.io.dataset yields them."""

    def __init__(self, vocab_size, n_batches=2, batch_size=8, neg=3, seed=0):
        self.vocab_size, self.n_batches, self.batch_size, self.neg = vocab_size, n_batches, batch_size, neg
        self.rng = np.random.RandomState(seed)

    def make_iter(self):
        for _ in range(self.n_batches):
            pos_u = self.rng.randint(0, self.vocab_size, self.batch_size).tolist()
            pos_v = self.rng.randint(0, self.vocab_size, self.batch_size).tolist()
            neg_u = [u for u in pos_u for _ in range(self.neg)]
            neg_v = self.rng.randint(0, self.vocab_size, self.batch_size * self.neg).tolist()
            yield pos_u, pos_v, neg_u, neg_v

# ----------------------------- pyword2vec/model/nn/skip_gram.py -----------------------------


class SkipGram(torch.nn.Module):
    def __init__(self, embedding_dim, vocab_size):
        super(SkipGram, self).__init__()
        initrange = 0.5 / embedding_dim
        self.u_embedding_matrix = nn.Embedding(vocab_size, embedding_dim)
        self.u_embedding_matrix.weight.data.uniform_(-initrange, initrange)
        self.v_embedding_matrix = nn.Embedding(vocab_size, embedding_dim)
        self.v_embedding_matrix.weight.data.uniform_(-0, 0)

    def forward(self, pos_u, pos_v, neg_u, neg_v):
        embed_pos_u = self.v_embedding_matrix(pos_u)
        embed_pos_v = self.u_embedding_matrix(pos_v)
        score = torch.mul(embed_pos_u, embed_pos_v)
        score = torch.sum(score, dim=1)
        log_target = F.logsigmoid(score).squeeze()

        embed_neg_u = self.u_embedding_matrix(neg_u)
        embed_neg_v = self.v_embedding_matrix(neg_v)

        neg_score = torch.mul(embed_neg_u, embed_neg_v)
        neg_score = torch.sum(neg_score, dim=1)
        sum_log_sampled = F.logsigmoid(-1 * neg_score).squeeze()

        loss = log_target.sum() + sum_log_sampled.sum()
        loss = -1 * loss
        return loss

# ----------------------------- pyword2vec/train/train_utils.py -----------------------------


def prepare_device(n_gpu_use, logger):
    """Stand-in of the GPU probing: the machine has two GPUs, and the ids asked for are used
    (a CPU device stands for cuda:0)."""
    if isinstance(n_gpu_use, int):
        n_gpu_use = range(n_gpu_use)
    n_gpu = 2
    if len(n_gpu_use) > n_gpu:
        logger.warning("Warning: The number of GPU's configured to use is {}, but only {} are available on this machine.".format(n_gpu_use, n_gpu))
        n_gpu_use = range(n_gpu)
    device = torch.device('cpu')
    list_ids = n_gpu_use
    return device, list_ids


def model_device(n_gpu, model, logger):
    device, device_ids = prepare_device(n_gpu, logger)
    if len(device_ids) > 1:
        logger.info("current {} GPUs".format(len(device_ids)))
        model = DataParallel(model, device_ids=device_ids)
    model = model.to(device)
    return model, device

# ----------------------------- pyword2vec/train/trainer.py -----------------------------


class Trainer(object):
    def __init__(self, model, epochs, logger, n_gpu, vocab, train_data, optimizer, lr_scheduler, verbose=1):
        self.model = model
        self.train_data = train_data
        self.epochs = epochs
        self.optimizer = optimizer
        self.logger = logger
        self.verbose = verbose
        self.lr_scheduler = lr_scheduler
        self.n_gpu = n_gpu
        self.vocab = vocab
        self._reset()

    def _reset(self):
        self.progressbar = ProgressBar(loss_name='loss', n_batch=self.train_data.n_batches)
        self.model, self.device = model_device(n_gpu=self.n_gpu, model=self.model, logger=self.logger)
        self.start_epoch = 1

    def _train_epoch(self):
        self.model.train()
        i = 0
        input_type = torch.LongTensor
        train_examples = self.train_data.make_iter()
        for pos_u, pos_v, neg_u, neg_v in train_examples:
            start = time.time()
            pos_u = input_type(pos_u).to(self.device)
            pos_v = input_type(pos_v).to(self.device)
            neg_u = input_type(neg_u).to(self.device)
            neg_v = input_type(neg_v).to(self.device)
            self.optimizer.zero_grad()
            loss = self.model(pos_u, pos_v, neg_u, neg_v)
            if len(self.n_gpu) > 1:
                loss = loss.mean()
            loss.backward()
            self.optimizer.step()
            i += 1
            if self.verbose >= 1:
                self.progressbar.step(batch_idx=i, loss=loss.item(), use_time=time.time() - start)

    def train(self):
        for epoch in range(self.start_epoch, self.start_epoch + self.epochs):
            print("----------------- training start -----------------------")
            print("Epoch {i}/{epochs}......".format(i=epoch, epochs=self.start_epoch + self.epochs - 1))
            self._train_epoch()
            if self.lr_scheduler:
                self.lr_scheduler.step()

# ----------------------------- train_word2vec.py -----------------------------


def main():
    torch.manual_seed(0)
    vocab = {'w%d' % i: i for i in range(30)}
    train_data = DataLoader(vocab_size=len(vocab))
    model = SkipGram(embedding_dim=8, vocab_size=len(vocab))
    optimizer = torch.optim.Adam(model.parameters(), lr=0.001)
    lr_scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.9)
    trainer = Trainer(model=model, epochs=2, logger=logger, n_gpu=[0, 1], vocab=vocab, train_data=train_data,
                      optimizer=optimizer, lr_scheduler=lr_scheduler, verbose=1)
    trainer.train()


main()
