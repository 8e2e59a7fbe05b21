# Source: https://github.com/yunjey/pytorch-tutorial/issues/90
"""yunjey/pytorch-tutorial's RNN language model (02-intermediate/language_model/main.py, as posted in
the report): the reporter asks why the LSTM states are cut with `states = detach(states)` at each
step instead of simply being carried over. Carried over as they are (this program, the detach
removed), the second batch's states hold the first batch's graph, which the first
`loss.backward()` freed: "Trying to backward through the graph a second time". The tutorial's
answer is truncated backpropagation through time: detach the states before each forward. The Penn
Treebank corpus (data_utils.Corpus) is a small random stand-in; sizes are shrunk.
"""
import torch
import torch.nn as nn
import numpy as np
from torch.nn.utils import clip_grad_norm_

# Hyper Parameters
embed_size = 16
hidden_size = 32
num_layers = 1
num_epochs = 2
batch_size = 4
seq_length = 5
learning_rate = 0.002


class Corpus(object):
    """Stand-in for data_utils.Corpus: a random token stream reshaped to (batch_size, -1)."""
    def __init__(self, vocab_size=50):
        self.vocab_size = vocab_size

    def get_data(self, path, batch_size=20, n_tokens=84):
        ids = torch.randint(0, self.vocab_size, (n_tokens,))
        num_batches = ids.size(0) // batch_size
        ids = ids[:num_batches * batch_size]
        return ids.view(batch_size, -1)


# Load Penn Treebank Dataset
train_path = './data/train.txt'
corpus = Corpus()
ids = corpus.get_data(train_path, batch_size)
vocab_size = corpus.vocab_size
num_batches = ids.size(1) // seq_length


# RNN Based Language Model
class RNNLM(nn.Module):
    def __init__(self, vocab_size, embed_size, hidden_size, num_layers):
        super(RNNLM, self).__init__()
        self.embed = nn.Embedding(vocab_size, embed_size)
        self.lstm = nn.LSTM(embed_size, hidden_size, num_layers, batch_first=True)
        self.linear = nn.Linear(hidden_size, vocab_size)
        self.init_weights()

    def init_weights(self):
        self.embed.weight.data.uniform_(-0.1, 0.1)
        self.linear.bias.data.fill_(0)
        self.linear.weight.data.uniform_(-0.1, 0.1)

    def forward(self, x, h):
        # Embed word ids to vectors
        x = self.embed(x)
        # Forward propagate RNN
        out, h = self.lstm(x, h)
        # Reshape output to (batch_size*sequence_length, hidden_size)
        out = out.contiguous().view(out.size(0) * out.size(1), out.size(2))
        # Decode hidden states of all time step
        out = self.linear(out)
        return out, h


model = RNNLM(vocab_size, embed_size, hidden_size, num_layers)

# Loss and Optimizer
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=learning_rate)


# Truncated Backpropagation
def detach(states):
    return [state.detach() for state in states]


# Training
for epoch in range(num_epochs):
    # Initial hidden and memory states
    states = (torch.zeros(num_layers, batch_size, hidden_size),
              torch.zeros(num_layers, batch_size, hidden_size))

    for i in range(0, ids.size(1) - seq_length, seq_length):
        # Get batch inputs and targets
        inputs = ids[:, i:i + seq_length]
        targets = ids[:, (i + 1):(i + 1) + seq_length].contiguous()

        # Forward + Backward + Optimize
        model.zero_grad()
        outputs, states = model(inputs, states)
        loss = criterion(outputs, targets.view(-1))
        loss.backward()  # expect: GG101
        clip_grad_norm_(model.parameters(), 0.5)
        optimizer.step()

        step = (i + 1) // seq_length
        if step % 100 == 0:
            print('Epoch [%d/%d], Step[%d/%d], Loss: %.3f, Perplexity: %5.2f' %
                  (epoch + 1, num_epochs, step, num_batches, loss.item(), np.exp(loss.item())))
