# Source: https://github.com/guoyang9/UnifER/issues/3
"""UnifER (knowledge-based VQA) run with `--gpu 1,2`: `main()` wraps `KnowledgeNotNoise` in
`nn.DataParallel` because the gpu string has a comma, and the model's forward returns its two 0-d
losses (retriever, reader) with the predictions. DataParallel gathers each 0-d loss of the two
replicas into a vector of 2, so `loss = 1.0 * retriever_loss + reader_loss` in `train()` has two
elements and `loss.backward()` raises "grad can be implicitly created only for scalar outputs" (the
reporter found both losses were "two-dimensional vectors"). Fix: average the gathered losses. The
BERT encoder, the knowledge base, the OK-VQA dataset, tqdm, the tracker and DataParallel (two
replicas, gathering 0-d outputs as vectors) are small CPU stand-ins written in the file.
"""
from types import SimpleNamespace

import torch
import torch.nn as nn
import torch.nn.functional as F

# ----------------------------- stand-ins: DataParallel, tracker, dataset -----------------------------


class DataParallel(nn.Module):
    """CPU stand-in for nn.DataParallel over two replicas (scatter dim 0, gather dim 0)."""

    def __init__(self, module, device_ids=(0, 1)):
        super().__init__()
        self.module, self.device_ids = module, list(device_ids)

    def _scatter(self, obj, n):
        if torch.is_tensor(obj):
            return list(obj.chunk(n))
        if isinstance(obj, dict):
            parts = {k: self._scatter(v, n) for k, v in obj.items()}
            return [{k: parts[k][i] for k in obj} for i in range(n)]
        if isinstance(obj, list) and len(obj) % n == 0:
            step = len(obj) // n
            return [obj[i * step:(i + 1) * step] for i in range(n)]
        return [obj] * n

    def forward(self, *inputs):
        n = len(self.device_ids)
        scattered = [self._scatter(x, n) for x in inputs]
        outputs = [self.module(*args) for args in zip(*scattered)]
        gathered = []
        for outs in zip(*outputs):
            if outs[0].dim() == 0:  # "all input tensors were scalars; will instead unsqueeze and return a vector"
                gathered.append(torch.stack(outs))
            else:
                gathered.append(torch.cat(outs, 0))
        return tuple(gathered)


class Tracker:
    class MovingMeanMonitor:
        def __init__(self, momentum=0.9):
            self.momentum, self.value = momentum, None

        def append(self, v):
            v = float(v)
            self.value = v if self.value is None else self.momentum * self.value + (1 - self.momentum) * v

        @property
        def mean(self):
            return SimpleNamespace(value=self.value)

    def track(self, name, monitor):
        return monitor


def tqdm(it, ncols=0, leave=True):
    return it


def soft_acc(pred, answer):
    _, idx = pred.max(dim=1)
    return answer.gather(1, idx.unsqueeze(1)).squeeze(1)


def make_loader(n_batches=2, batch_size=4, n_ans=6, seq=5, n_obj=3, dim=8):
    loader = []
    for _ in range(n_batches):
        loader.append({
            'question': {'words': ['what is this'] * batch_size,
                         'inputs': {'input_ids': torch.randint(0, 50, (batch_size, seq))}},
            'answer': {'target': torch.rand(batch_size, n_ans)},
            'img': {'id': list(range(batch_size)), 'path': ['img.jpg'] * batch_size,
                    'feat': torch.randn(batch_size, n_obj, dim), 'pos': torch.rand(batch_size, n_obj, 4)},
        })
    return loader

# ----------------------------- modules/model_build.py (stand-in) -----------------------------


class PlainLoss(nn.Module):
    def __init__(self, loss_type='bce'):
        super().__init__()
        self.loss_type = loss_type

    def forward(self, logits, target):
        return F.binary_cross_entropy_with_logits(logits, target) * target.size(1)


class KnowledgeNotNoise(nn.Module):
    def __init__(self, config, loss_fn, num_ans, dim=8, vocab=50):
        super().__init__()
        self.loss_fn = loss_fn
        self.q_embed = nn.Embedding(vocab, dim)
        self.v_proj = nn.Linear(dim, dim)
        self.retriever = nn.Linear(2 * dim, dim)
        self.reader = nn.Sequential(nn.Linear(3 * dim, dim), nn.ReLU(), nn.Linear(dim, num_ans))
        self.top_k = config['train']['top_k']

    def forward(self, img, question_words, inputs_question, answer, knowledge_full, knowledge_embed):
        q = self.q_embed(inputs_question['input_ids']).mean(1)
        v = self.v_proj(img['feat']).mean(1)
        query = self.retriever(torch.cat([q, v], -1))
        scores = query @ knowledge_embed.t()
        top_scores, top_idx = scores.topk(self.top_k, dim=1)
        know = (F.softmax(top_scores, 1).unsqueeze(-1) * knowledge_embed[top_idx]).sum(1)
        vlk_pred = self.reader(torch.cat([q, v, know], -1))
        retriever_loss = -F.log_softmax(scores, 1).max(1)[0].mean()
        reader_loss = self.loss_fn(vlk_pred, answer)
        return retriever_loss, reader_loss, vlk_pred

# ----------------------------- train.py -----------------------------


def train(dataset, model, optim, lr_scheduler, train_loader, knowledge_full, knowledge_embed,
          tracker, tb_count, writer):
    loader = tqdm(train_loader, ncols=0)
    loss_trk = tracker.track('loss', tracker.MovingMeanMonitor(momentum=0.99))
    acc_trk = tracker.track('acc', tracker.MovingMeanMonitor(momentum=0.99))

    for train_tuple in loader:
        question_words = train_tuple['question']['words']
        inputs_question = {k: v for k, v in train_tuple['question']['inputs'].items()}
        answer = train_tuple['answer']['target']

        img = {
            'id': train_tuple['img']['id'],
            'path': train_tuple['img']['path'],
            'feat': train_tuple['img']['feat'],
            'pos': train_tuple['img']['pos'] if 'pos' in train_tuple['img'] else None
        }

        retriever_loss, reader_loss, vlk_pred = model(img,
            question_words, inputs_question,
            answer,
            knowledge_full, knowledge_embed)

        # define loss functions
        loss = 1.0 * retriever_loss + reader_loss
        tb_count += 1

        loss.backward()  # expect: GG105
        optim.step()
        optim.zero_grad()

        batch_score = soft_acc(vlk_pred, answer)
        loss_trk.append(loss.item())
        acc_trk.append(batch_score.mean())
    if lr_scheduler is not None:
        lr_scheduler.step()
    return tb_count

# ----------------------------- main.py -----------------------------


def main(args):
    config = {'train': {'loss_type': 'bce', 'num_fix_layer': 0, 'top_k': 2},
              'run': {'seed': 0, 'lr': 1e-3, 'weight_decay': 0.0, 'lr_scheduler': True, 'epochs': 2}}
    torch.manual_seed(config['run']['seed'])

    loss_fn = PlainLoss(config['train']['loss_type'])
    num_ans_candidates = 6
    model = KnowledgeNotNoise(config, loss_fn, num_ans_candidates)
    if ',' in args.gpu:
        model = DataParallel(model)

    optim = torch.optim.AdamW(model.parameters(), lr=config['run']['lr'],
                              weight_decay=config['run']['weight_decay'])
    lr_scheduler = torch.optim.lr_scheduler.ExponentialLR(optim, gamma=0.75)

    knowledge_full = ['fact %d' % i for i in range(10)]
    knowledge_embed = torch.randn(10, 8)

    tracker, tb_count = Tracker(), 0
    train_loader = make_loader()
    for epoch in range(config['run']['epochs']):
        print("training epoch {:03d}".format(epoch))
        tb_count = train(args.dataset, model, optim, lr_scheduler, train_loader,
                         knowledge_full, knowledge_embed, tracker, tb_count, None)


main(SimpleNamespace(gpu='1,2', dataset='OKVQA'))
