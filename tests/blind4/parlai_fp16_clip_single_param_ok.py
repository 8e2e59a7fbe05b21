# Source: https://github.com/facebookresearch/ParlAI/pull/3014
"""ParlAI's fp16 gradient clipping as the PR fixes it: the single-parameter special case, which
scaled the parameter itself in place, is dropped, and every parameter list goes through
torch.nn.utils.clip_grad_norm_, which clips the gradients (under no_grad) as intended."""
import torch
import torch.nn as nn
import torch.nn.functional as F


def clip_grad_norm(params, max_norm):
    """
    Clips grad norm.
    """
    params = list(params)
    if max_norm > 0:
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
