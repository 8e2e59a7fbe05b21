# Source: https://github.com/bigdata-ustc/EduKTM/issues/19
"""EduKTM, EduKTM/DKT/DKT.py (Deep Knowledge Tracing) as released in 2021: `DKT.train` starts each batch's
loss as a constant `loss = torch.Tensor([0.0])` and adds one BCE term per student whose sequence has a
prediction to grade (`if pred.shape[0] != 0`). With `batch_size=1`, a student with a single interaction adds
nothing, the loss stays the constant, and `loss.backward()` raises "element 0 of tensors does not require
grad and does not have a grad_fn" (larger batches almost always hold a gradable student). PR #27 rewrote the
loop to one loss over the whole epoch; the `_ok` twin keeps the per-batch update and skips a batch with no
gradable interaction. The KTM base class, tqdm and sklearn are stand-ins; the response sequences are random
one-hot question/answer encodings with one single-interaction student; CPU.
"""
import logging

import numpy as np
import torch
from torch import nn
from torch.autograd import Variable


class KTM(object):
    """EduKTM.KTM stand-in."""
    def train(self, *args, **kwargs):
        raise NotImplementedError


def tqdm_standin(iterable, desc=None):
    return iterable


class Net(nn.Module):
    def __init__(self, num_questions, hidden_size, num_layers):
        super(Net, self).__init__()
        self.hidden_dim = hidden_size
        self.layer_dim = num_layers
        self.rnn = nn.RNN(num_questions * 2, hidden_size, num_layers, batch_first=True)
        self.fc = nn.Linear(self.hidden_dim, num_questions)

    def forward(self, x):
        h0 = Variable(torch.zeros(self.layer_dim, x.size(0), self.hidden_dim))
        out, _ = self.rnn(x, h0)
        res = torch.sigmoid(self.fc(out))
        return res


def process_raw_pred(raw_question_matrix, raw_pred, num_questions: int) -> tuple:
    questions = torch.nonzero(raw_question_matrix)[1:, 1] % num_questions
    length = questions.shape[0]
    pred = raw_pred[: length]
    pred = pred.gather(1, questions.view(-1, 1)).flatten()
    truth = torch.nonzero(raw_question_matrix)[1:, 1] // num_questions
    return pred, truth


class DKT(KTM):
    def __init__(self, num_questions, hidden_size, num_layers):
        super(DKT, self).__init__()
        self.num_questions = num_questions
        self.dkt_model = Net(num_questions, hidden_size, num_layers)

    def train(self, train_data, test_data=None, *, epoch: int, lr=0.002) -> ...:
        loss_function = nn.BCELoss()
        optimizer = torch.optim.Adam(self.dkt_model.parameters(), lr)

        for e in range(epoch):
            losses = []
            for batch in tqdm_standin(train_data, "Epoch %s" % e):
                integrated_pred = self.dkt_model(batch)
                batch_size = batch.shape[0]
                loss = torch.Tensor([0.0])
                for student in range(batch_size):
                    pred, truth = process_raw_pred(batch[student], integrated_pred[student], self.num_questions)
                    if pred.shape[0] != 0:
                        loss += loss_function(pred, truth.float())

                # back propagation
                optimizer.zero_grad()
                loss.backward()  # expect: GG104
                optimizer.step()

                losses.append(loss.mean().item())
            print("[Epoch %d] LogisticLoss: %.6f" % (e, float(np.mean(losses))))

    def save(self, filepath):
        logging.info("save parameters to %s" % filepath)


# ---- examples/DKT: data preparation stand-in ----
NUM_QUESTIONS = 6
HIDDEN_SIZE = 8
NUM_LAYERS = 1
MAX_STEP = 5


def encode_onehot(questions, answers):
    """(question, answer) pairs -> MAX_STEP x 2*NUM_QUESTIONS one-hot rows, zero padded."""
    result = np.zeros(shape=[MAX_STEP, 2 * NUM_QUESTIONS], dtype=np.float32)
    for i in range(len(questions)):
        index = int(questions[i] if answers[i] > 0 else questions[i] + NUM_QUESTIONS)
        result[i][index] = 1
    return result


rng = np.random.RandomState(0)
torch.manual_seed(0)
students = [(rng.randint(0, NUM_QUESTIONS, 4), rng.randint(0, 2, 4)),
            (rng.randint(0, NUM_QUESTIONS, 1), rng.randint(0, 2, 1)),   # one interaction only
            (rng.randint(0, NUM_QUESTIONS, 5), rng.randint(0, 2, 5))]
dataset = torch.tensor(np.stack([encode_onehot(q, a) for q, a in students]))
train_loader = torch.utils.data.DataLoader(dataset, batch_size=1, shuffle=False)

dkt = DKT(NUM_QUESTIONS, HIDDEN_SIZE, NUM_LAYERS)
dkt.train(train_loader, epoch=2)
dkt.save("dkt.params")
