# Source: https://github.com/chojw/genb/issues/6
"""Fixed twin of q_genb_discriminator_backward_after_genb_step_bug.py. GenB's `train.py` backwarded
the discriminator's loss through `vae_preds = discriminator(pred_g)` after `optim_G.step()` had
updated the bias model `genb` in place, which newer torch refuses ("modified by an inplace
operation"). The reporter's workaround in the thread moves `optim_G.step()` after the
discriminator's backward, which lets the discriminator's loss (fake label) flow into genb's update;
the fix applied here (the right one) trains the discriminator on detached predictions,
`discriminator(pred_g.detach())` and `discriminator(pred.detach())`, so its backward stays inside
the discriminator (and needs no `retain_graph`). The VQA base model, GenB, the discriminator and
the loader are small CPU stand-ins written in the file.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable

Tensor = torch.FloatTensor

# ----------------------------- base_model.py (stand-ins) -----------------------------


class BaseModel(nn.Module):
    def __init__(self, num_tokens=20, v_dim=8, hid=16, num_ans=10):
        super().__init__()
        self.w_emb = nn.Embedding(num_tokens, hid)
        self.v_proj = nn.Linear(v_dim, hid)
        self.classifier = nn.Sequential(nn.Linear(hid, 2 * hid), nn.ReLU(), nn.Linear(2 * hid, num_ans))

    def forward(self, v, q):
        q_emb = self.w_emb(q).mean(1)
        att = torch.softmax((self.v_proj(v) * q_emb.unsqueeze(1)).sum(-1), dim=1)
        v_emb = (att.unsqueeze(-1) * self.v_proj(v)).sum(1)
        return self.classifier(q_emb * v_emb)


class GenB(BaseModel):
    def forward(self, v, q, gen=True):
        if gen:
            v = v + 0.1 * torch.randn_like(v)  # generative noise
        return super().forward(v, q)


class Discriminator(nn.Module):
    def __init__(self, num_ans=10, hid=256):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(num_ans, hid), nn.ReLU(), nn.Linear(hid, 1), nn.Sigmoid())

    def forward(self, x):
        return self.net(x)


def make_loader(n_batches=2, batch=4, k=5, v_dim=8, q_len=6, num_ans=10):
    return [(torch.randn(batch, k, v_dim), torch.randint(0, 20, (batch, q_len)),
             (torch.rand(batch, num_ans) > 0.8).float(), torch.arange(batch)) for _ in range(n_batches)]

# ----------------------------- train.py -----------------------------


def compute_score_with_logits(logits, labels):
    logits = torch.argmax(logits, 1)
    one_hots = torch.zeros(*labels.size())
    one_hots.scatter_(1, logits.view(-1, 1), 1)
    return one_hots * labels


def calc_genb_loss(logits, bias, labels):
    gen_grad = torch.clamp(2 * labels * torch.sigmoid(-2 * labels * bias.detach()), 0, 1)
    loss = F.binary_cross_entropy_with_logits(logits, gen_grad)
    loss *= labels.size(1)
    return loss


def train(model, genb, discriminator, train_loader, num_epochs):
    optim = torch.optim.Adamax(filter(lambda p: p.requires_grad, model.parameters()), lr=0.001)
    optim_G = torch.optim.Adamax(filter(lambda p: p.requires_grad, genb.parameters()), lr=0.001)
    optim_D = torch.optim.Adamax(filter(lambda p: p.requires_grad, discriminator.parameters()), lr=0.001)

    genb.train(True)
    discriminator.train(True)

    kld = nn.KLDivLoss(reduction='batchmean')
    bce = nn.BCELoss()

    for epoch in range(num_epochs):
        total_loss = 0
        train_score = 0
        for i, (v, q, a, qid) in enumerate(train_loader):
            v = Variable(v).requires_grad_()
            q = Variable(q)
            a = Variable(a)
            valid = Variable(Tensor(v.size(0), 1).fill_(1.0), requires_grad=False)
            fake = Variable(Tensor(v.size(0), 1).fill_(0.0), requires_grad=False)

            # get model output
            optim.zero_grad()
            pred = model(v, q)

            # train genb
            optim_G.zero_grad()
            optim_D.zero_grad()

            pred_g = genb(v, q, gen=True)
            g_loss = F.binary_cross_entropy_with_logits(pred_g, a, reduction='none').mean()
            g_loss *= a.size(1)

            vae_preds = discriminator(pred_g)
            main_preds = discriminator(pred)

            g_distill = kld(pred_g, pred.detach())
            dsc_loss = bce(vae_preds, valid) + bce(main_preds, valid)

            g_loss += dsc_loss + g_distill * 5
            g_loss.backward(retain_graph=True)
            nn.utils.clip_grad_norm_(genb.parameters(), 0.25)
            optim_G.step()
            # done training genb

            # train the discriminator
            dsc_loss = bce(discriminator(pred_g.detach()), fake) + bce(discriminator(pred.detach()), valid)
            dsc_loss.backward()
            optim_D.step()
            # done training the discriminator

            # use genb to train the robust model
            genb.train(False)
            pred_g = genb(v, q, gen=False)

            genb_loss = calc_genb_loss(pred, pred_g, a)
            genb_loss.backward()

            nn.utils.clip_grad_norm_(model.parameters(), 0.25)
            optim.step()

            genb.train(True)
            total_loss += genb_loss.item() * q.size(0)
            train_score += compute_score_with_logits(pred, a.data).sum()
        print('Epoch %d, train_loss: %.2f, score: %.2f' % (epoch + 1, total_loss, train_score))


torch.manual_seed(0)
train(BaseModel(), GenB(), Discriminator(), make_loader(), num_epochs=2)
