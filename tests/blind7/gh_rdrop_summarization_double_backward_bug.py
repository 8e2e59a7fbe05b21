# Source: https://github.com/dropreg/R-Drop/issues/8
"""R-Drop's summarization example (dropreg, fairseq_src/examples/summeration_rdrop) as the issue
found it: the criterion's forward_reg already backwards the R-Drop loss through the fairseq
optimizer, and the task's train_step then calls optimizer.backward(loss) on the same loss again
("Trying to backward through the graph a second time"; the reporter removed the task's four
lines, and the authors fixed it the same way). forward_reg, label_smoothed_nll_loss,
compute_kl_loss and train_step are the repository's; a small dropout encoder-decoder with
fairseq's get_normalized_probs/get_targets, a FairseqOptimizer-like wrapper and random token
batches stand in for fairseq."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def label_smoothed_nll_loss(lprobs, target, epsilon, ignore_index=None, reduce=True):
    if target.dim() == lprobs.dim() - 1:
        target = target.unsqueeze(-1)
    nll_loss = -lprobs.gather(dim=-1, index=target)
    smooth_loss = -lprobs.sum(dim=-1, keepdim=True)
    if ignore_index is not None:
        pad_mask = target.eq(ignore_index)
        nll_loss.masked_fill_(pad_mask, 0.)
        smooth_loss.masked_fill_(pad_mask, 0.)
    else:
        nll_loss = nll_loss.squeeze(-1)
        smooth_loss = smooth_loss.squeeze(-1)
    if reduce:
        nll_loss = nll_loss.sum()
        smooth_loss = smooth_loss.sum()
    eps_i = epsilon / lprobs.size(-1)
    loss = (1. - epsilon) * nll_loss + eps_i * smooth_loss
    return loss, nll_loss


class TinySeq2Seq(nn.Module):
    def __init__(self, vocab=20, dim=16, dropout=0.3):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim, padding_idx=1)
        self.encoder = nn.GRU(dim, dim, batch_first=True)
        self.decoder = nn.GRU(dim, dim, batch_first=True)
        self.dropout = nn.Dropout(dropout)
        self.out = nn.Linear(dim, vocab)

    def forward(self, src_tokens, src_lengths, prev_output_tokens):
        _, h = self.encoder(self.dropout(self.embed(src_tokens)))
        x, _ = self.decoder(self.dropout(self.embed(prev_output_tokens)), h)
        return (self.out(self.dropout(x)), None)

    def get_normalized_probs(self, net_output, log_probs):
        logits = net_output[0].float()
        return F.log_softmax(logits, dim=-1) if log_probs else F.softmax(logits, dim=-1)

    def get_targets(self, sample, net_output):
        return sample['target']


class FairseqOptimizer(object):
    def __init__(self, params, lr):
        self.optimizer = torch.optim.Adam(params, lr=lr)

    def backward(self, loss):
        loss.backward()  # expect: GG101

    def zero_grad(self):
        self.optimizer.zero_grad()

    def step(self):
        self.optimizer.step()


class RegLabelSmoothedCrossEntropyCriterion(object):
    def __init__(self, label_smoothing, padding_idx=1):
        self.eps = label_smoothing
        self.padding_idx = padding_idx

    def compute_kl_loss(self, model, net_output, pad_mask=None, reduce=True):
        net_prob = model.get_normalized_probs(net_output, log_probs=True)
        net_prob_tec = model.get_normalized_probs(net_output, log_probs=False)
        p, q = torch.split(net_prob, net_prob.size(0) // 2, dim=0)
        p_tec, q_tec = torch.split(net_prob_tec, net_prob_tec.size(0) // 2, dim=0)
        p_loss = torch.nn.functional.kl_div(p, q_tec, reduction='none')
        q_loss = torch.nn.functional.kl_div(q, p_tec, reduction='none')
        if pad_mask is not None:
            p_loss.masked_fill_(pad_mask, 0.)
            q_loss.masked_fill_(pad_mask, 0.)
        if reduce:
            p_loss = p_loss.sum()
            q_loss = q_loss.sum()
        loss = (p_loss + q_loss) / 2
        return loss

    def forward_reg(self, model, sample, optimizer, reg_alpha, ignore_grad, reduce=True):
        sample_input = sample['net_input']
        sample_concat_input = {
            'src_tokens': torch.cat([sample_input['src_tokens'], sample_input['src_tokens'].clone()], 0),
            'src_lengths': torch.cat([sample_input['src_lengths'], sample_input['src_lengths'].clone()], 0),
            'prev_output_tokens': torch.cat([sample_input['prev_output_tokens'], sample_input['prev_output_tokens'].clone()], 0),
        }
        net_output = model(**sample_concat_input)
        lprobs = model.get_normalized_probs(net_output, log_probs=True)
        lprobs = lprobs.view(-1, lprobs.size(-1))
        target = model.get_targets(sample, net_output)
        pad_mask = target.unsqueeze(-1).eq(self.padding_idx)
        target = torch.cat([target, target.clone()], dim=0)
        loss, nll_loss = label_smoothed_nll_loss(
            lprobs, target.view(-1, 1), self.eps, ignore_index=self.padding_idx, reduce=reduce,
        )
        kl_loss = self.compute_kl_loss(model, net_output, pad_mask)
        loss += reg_alpha * kl_loss
        if ignore_grad:
            loss *= 0
        with torch.autograd.profiler.record_function("backward"):
            optimizer.backward(loss)
        sample_size = sample['ntokens']
        logging_output = {'loss': loss.item(), 'nll_loss': nll_loss.item(), 'sample_size': sample_size}
        return loss, sample_size, logging_output


class RDropTranslationTask(object):
    reg_alpha = 0.7

    def train_step(self, sample, model, criterion, optimizer, update_num, ignore_grad=False):
        model.train()
        with torch.autograd.profiler.record_function("forward"):
            loss, sample_size, logging_output = criterion.forward_reg(
                model, sample, optimizer, self.reg_alpha, ignore_grad)
        if ignore_grad:
            loss *= 0
        with torch.autograd.profiler.record_function("backward"):
            optimizer.backward(loss)
        return loss, sample_size, logging_output


def random_sample(batch_size=3, src_len=7, tgt_len=5, vocab=20):
    target = torch.randint(2, vocab, (batch_size, tgt_len))
    target[0, -1] = 1  # padding
    return {'net_input': {'src_tokens': torch.randint(2, vocab, (batch_size, src_len)),
                          'src_lengths': torch.full((batch_size,), src_len),
                          'prev_output_tokens': torch.roll(target, 1, dims=1)},
            'target': target, 'ntokens': int(target.ne(1).sum())}


model = TinySeq2Seq()
task = RDropTranslationTask()
criterion = RegLabelSmoothedCrossEntropyCriterion(label_smoothing=0.1)
optimizer = FairseqOptimizer(model.parameters(), lr=3e-4)
for update_num in range(3):
    optimizer.zero_grad()
    loss, sample_size, logging_output = task.train_step(random_sample(), model, criterion, optimizer, update_num)
    optimizer.step()
    print(update_num, logging_output)
