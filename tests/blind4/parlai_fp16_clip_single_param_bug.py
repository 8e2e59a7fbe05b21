# Source: https://github.com/facebookresearch/ParlAI/pull/3014
"""ParlAI's fp16 gradient clipping (parlai/utils/fp16.py, copied from fairseq): clip_grad_norm takes
the optimizer's parameters and, when there is exactly one, clips it by hand, `grad_norm =
torch.norm(p)` and `p.mul_(clip_coef)`. In fairseq that single tensor was the flattened gradient
buffer; in ParlAI it is the parameter itself, a leaf that requires grad, so the in-place multiply
raises "a leaf Variable that requires grad has been used in an in-place operation". The PR's author
hit it with a task-token model whose only trainable parameter is one embedding table (everything
else frozen). The agent's update_params / MemoryEfficientFP16Optimizer.clip_master_grads path is
kept, small: the loss scale is a plain float, the model an embedding plus a frozen encoder and head
on random token batches."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def clip_grad_norm(params, max_norm):
    """
    Clips grad norm.
    """
    params = list(params)
    if len(params) == 1:
        p = params[0]
        grad_norm = torch.norm(p)
        if grad_norm > max_norm > 0:
            clip_coef = max_norm / (grad_norm + 1e-6)
            p.mul_(clip_coef)  # expect: GG108
        return grad_norm
    elif max_norm > 0:
        return torch.nn.utils.clip_grad_norm_(params, max_norm)
    else:
        return torch.sqrt(
            sum(p.grad.data.norm() ** 2 for p in params if p.grad is not None)
        )


class MemoryEfficientFP16Optimizer(object):
    def __init__(self, init_optimizer, loss_initial_scale=2.0 ** 7):
        self.optimizer = init_optimizer
        self.scaler = loss_initial_scale
        self._grads_are_scaled = False

    @property
    def params(self):
        for param_group in self.optimizer.param_groups:
            for p in param_group['params']:
                yield p

    def backward(self, loss):
        loss = loss * self.scaler
        loss.backward()
        self._grads_are_scaled = True

    def _unscale_grads(self):
        if self._grads_are_scaled:
            self._grads_are_scaled = False
            for p in self.params:
                if p.grad is not None:
                    p.grad.data.mul_(1.0 / self.scaler)

    def clip_master_grads(self, gradient_clip):
        self._unscale_grads()
        return clip_grad_norm(self.params, gradient_clip)

    def step(self):
        self._unscale_grads()
        self.optimizer.step()

    def zero_grad(self):
        self.optimizer.zero_grad()
        self._grads_are_scaled = False


class TaskTokenModel(nn.Module):
    def __init__(self, n_task_tokens, vocab_size, dim, n_classes):
        super().__init__()
        self.task_embeddings = nn.Embedding(n_task_tokens, dim)
        self.embeddings = nn.Embedding(vocab_size, dim)
        self.encoder = nn.GRU(dim, dim, batch_first=True)
        self.head = nn.Linear(dim, n_classes)

    def forward(self, task, tokens):
        x = torch.cat([self.task_embeddings(task).unsqueeze(1), self.embeddings(tokens)], 1)
        _, h = self.encoder(x)
        return self.head(h[-1])


class TorchAgent(object):
    def __init__(self, opt, model):
        self.opt = opt
        self.model = model
        for name, p in model.named_parameters():
            p.requires_grad = name.startswith('task_embeddings')
        params = [p for p in model.parameters() if p.requires_grad]
        self.optimizer = MemoryEfficientFP16Optimizer(torch.optim.Adam(params, lr=opt['learningrate']))

    def update_params(self):
        if self.opt.get('gradient_clip', -1) > 0:
            grad_norm = self.optimizer.clip_master_grads(self.opt['gradient_clip'])
            print('gnorm', float(grad_norm))
        self.optimizer.step()

    def train_step(self, task, tokens, labels):
        self.optimizer.zero_grad()
        loss = F.cross_entropy(self.model(task, tokens), labels)
        self.optimizer.backward(loss)
        self.update_params()
        return loss.item()


opt = {'learningrate': 1e-3, 'gradient_clip': 0.1}
agent = TorchAgent(opt, TaskTokenModel(n_task_tokens=4, vocab_size=20, dim=8, n_classes=3))
for step in range(3):
    task = torch.randint(0, 4, (5,))
    tokens = torch.randint(0, 20, (5, 6))
    labels = torch.randint(0, 3, (5,))
    print(step, agent.train_step(task, tokens, labels))
