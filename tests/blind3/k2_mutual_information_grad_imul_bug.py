# Source: https://github.com/k2-fsa/k2/pull/1106
"""k2's RNN-T losses under loss.backward(retain_graph=True) ("useful when training with multiple
optimizers"): MutualInformationRecursionFunction saves the occupation gradients px_grad/py_grad
in forward and its backward scales them in place (px_grad *= ans_grad), so the first backward
overwrites the tensors the retained graph saved and the second backward through the same loss
raises "[torch.FloatTensor [2, 8, 17]] is at version 1; expected version 0" (the PR's fix:
px_grad = px_grad * ans_grad). The PR gives no program; this one trains an acoustic and a
language model with one optimizer each, each backwarding its weighted share of the same
rnnt_loss_simple. The _k2 CUDA/C++ kernels are written in Python (the recursion in a loop, its
gradient by autograd), get_rnnt_logprobs and rnnt_loss_simple follow k2, tiny random features and
symbol sequences stand in for speech. The second backward raises where the Function's backward
reads ctx.saved_tensors."""
import torch
import torch.nn as nn
from torch import Tensor


def _mutual_information_forward(px, py):
    """p[b,s,t] = log_add(p[b,s-1,t] + px[b,s-1,t], p[b,s,t-1] + py[b,s,t-1]); returns p[:, S, T]."""
    B, S, T1 = px.shape
    T = py.shape[-1]
    p = [[None] * (T + 1) for _ in range(S + 1)]
    for s in range(S + 1):
        for t in range(T + 1):
            terms = []
            if s > 0:
                terms.append(p[s - 1][t] + px[:, s - 1, t])
            if t > 0:
                terms.append(p[s][t - 1] + py[:, s, t - 1])
            p[s][t] = torch.zeros(B, dtype=px.dtype) if not terms else torch.stack(terms).logsumexp(0)
    return p[S][T]


def _mutual_information_backward(px, py):
    """The occupation probabilities: d(sum of scores)/d(px, py)."""
    with torch.enable_grad():
        px_, py_ = px.detach().requires_grad_(), py.detach().requires_grad_()
        ans = _mutual_information_forward(px_, py_)
        return torch.autograd.grad(ans.sum(), [px_, py_])


class MutualInformationRecursionFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, px, py, pxy_grads, boundary=None, return_grad=False):
        ans = _mutual_information_forward(px, py)
        px_grad, py_grad = None, None
        if return_grad or px.requires_grad or py.requires_grad:
            (px_grad, py_grad) = _mutual_information_backward(px, py)
            ctx.save_for_backward(px_grad, py_grad)
        pxy_grads[0] = px_grad
        pxy_grads[1] = py_grad
        return ans

    @staticmethod
    def backward(ctx, ans_grad: Tensor):
        (px_grad, py_grad) = ctx.saved_tensors  # expect: GG103
        (B,) = ans_grad.shape
        ans_grad = ans_grad.reshape(B, 1, 1)  # (B, 1, 1)
        px_grad *= ans_grad
        py_grad *= ans_grad
        return (px_grad, py_grad, None, None, None)


def mutual_information_recursion(px, py, boundary=None, return_grad=False):
    px, py = px.contiguous(), py.contiguous()
    pxy_grads = [None, None]
    scores = MutualInformationRecursionFunction.apply(px, py, pxy_grads, boundary, return_grad)
    px_grad, py_grad = pxy_grads
    return (scores, (px_grad, py_grad)) if return_grad else scores


def get_rnnt_logprobs(lm, am, symbols, termination_symbol):
    (B, T, C) = am.shape
    S = lm.shape[1] - 1
    am_max, _ = torch.max(am, dim=2, keepdim=True)  # am_max: [B][T][1]
    lm_max, _ = torch.max(lm, dim=2, keepdim=True)  # lm_max: [B][S+1][1]
    am_probs = (am - am_max).exp()
    lm_probs = (lm - lm_max).exp()
    normalizers = (torch.matmul(lm_probs, am_probs.transpose(1, 2)) + torch.finfo(am_probs.dtype).tiny).log()
    normalizers = normalizers + lm_max + am_max.transpose(1, 2)  # [B][S+1][T]

    px_am = torch.gather(am.unsqueeze(1).expand(B, S, T, C), dim=3,
                         index=symbols.reshape(B, S, 1, 1).expand(B, S, T, 1)).squeeze(-1)  # [B][S][T]
    px_am = torch.cat((px_am, torch.full((B, S, 1), float("-inf"), dtype=px_am.dtype)), dim=2)  # [B][S][T+1]
    px_lm = torch.gather(lm[:, :S], dim=2, index=symbols.unsqueeze(-1))  # [B][S][1]
    px = px_am + px_lm
    px[:, :, :T] -= normalizers[:, :S, :]

    py_am = am[:, :, termination_symbol].unsqueeze(1)  # [B][1][T]
    py_lm = lm[:, :, termination_symbol].unsqueeze(2)  # [B][S+1][1]
    py = py_am + py_lm - normalizers
    return (px, py)


def rnnt_loss_simple(lm, am, symbols, termination_symbol, boundary=None, reduction="sum"):
    px, py = get_rnnt_logprobs(lm=lm, am=am, symbols=symbols, termination_symbol=termination_symbol)
    scores = mutual_information_recursion(px=px, py=py, boundary=boundary)
    negated_loss = scores
    if reduction == "none":
        return -negated_loss
    elif reduction == "mean":
        return -torch.mean(negated_loss)
    return -torch.sum(negated_loss)


B, T, S, C, blank = 2, 6, 3, 5, 0
encoder = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, C))  # acoustic model
decoder = nn.Embedding(C, C)  # stateless "language model" on the previous symbol
enc_optimizer = torch.optim.Adam(encoder.parameters(), lr=1e-3)
dec_optimizer = torch.optim.SGD(decoder.parameters(), lr=1e-2)

for step in range(2):
    features = torch.randn(B, T, 8)
    symbols = torch.randint(1, C, (B, S))
    am = encoder(features)
    lm = decoder(torch.cat([torch.full((B, 1), blank), symbols], dim=1))
    loss = rnnt_loss_simple(lm=lm, am=am, symbols=symbols, termination_symbol=blank)

    enc_optimizer.zero_grad()
    dec_optimizer.zero_grad()
    loss.backward(retain_graph=True, inputs=list(encoder.parameters()))
    (0.5 * loss).backward(inputs=list(decoder.parameters()))
    enc_optimizer.step()
    dec_optimizer.step()
