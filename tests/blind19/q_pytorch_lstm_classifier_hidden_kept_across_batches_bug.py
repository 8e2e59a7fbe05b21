# Source: https://github.com/pytorch/pytorch/issues/2769
"""pytorch/pytorch#2769 "LSTM architecture has met a explosive growth in the training process": a
video-feature LSTM classifier stores its state in `self.hidden`, set once by init_hidden() in
__init__, and forward does `lstm_out, self.hidden = self.lstm(x, self.hidden)`. The training loop
never resets or detaches it, so every batch's graph hangs off the previous batch's graph through the
hidden state.

On PyTorch 0.2 the reporter saw the time per iteration grow without bound (3.6 s -> 12 s). On
torch 2.13 the second batch's `loss.backward()` raises "Trying to backward through the graph a
second time": it reaches the first batch's LSTM nodes, whose saved tensors the first backward freed.
The right fix: detach or re-initialise the state for each batch (here `model.hidden =
model.init_hidden()` before each forward, the usual answer for this model). Sizes are shrunk
(features 16, hidden 8, 5 classes, batch 1 as in the reporter's init_hidden) and the data are random.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable

torch.manual_seed(0)


class LSTM(nn.Module):
    def __init__(self, input_len=16, hidden_len=8, model_len=12, target_size=5, is_softmax=True):
        super(LSTM, self).__init__()
        self.hidden_len = hidden_len
        self.is_softmax = is_softmax
        self.lstm = nn.LSTM(input_len, hidden_len, batch_first=True)
        self.target_size = target_size
        self.hidden2class = nn.Linear(hidden_len, target_size)
        self.hidden = self.init_hidden()

    def init_hidden(self):
        return (Variable(torch.zeros(1, 1, self.hidden_len)),
                Variable(torch.zeros(1, 1, self.hidden_len)))

    def forward(self, x):
        lstm_out, self.hidden = self.lstm(x, self.hidden)
        cls_scores = self.hidden2class(lstm_out[:, -1, :]).view(-1, self.target_size)
        if self.is_softmax:
            cls_scores = F.log_softmax(cls_scores, dim=1)
        return cls_scores


class AverageMeter(object):
    def __init__(self):
        self.val = self.avg = self.sum = self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


def train(train_data, model, criterion, optimizer, epoch):
    losses = AverageMeter()
    model.train()
    for i, (input, target) in enumerate(train_data):
        input_var = torch.autograd.Variable(input)
        target_var = torch.autograd.Variable(target)
        output = model(input_var)
        loss = criterion(output, target_var)
        losses.update(loss.item(), input.size(0))

        optimizer.zero_grad()
        loss.backward()  # expect: GG101
        optimizer.step()
        print('Epoch: [{0}][{1}/{2}]\tLoss {loss.val:.4f} ({loss.avg:.4f})'.format(
            epoch, i, len(train_data), loss=losses))


train_data = [(torch.randn(1, 12, 16), torch.randint(0, 5, (1,))) for _ in range(3)]
model = LSTM()
criterion = nn.NLLLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
for epoch in range(1):
    train(train_data, model, criterion, optimizer, epoch)
