# Source: https://github.com/gabrielloye/RNN-walkthrough/issues/3
"""The reporter's stateful variant of the RNN walkthrough with the change they report working:
out, self.hidden = self.rnn(x, self.hidden.detach()). The state carries its values from epoch to
epoch, but each epoch's graph starts at the detached state."""
import numpy as np
import torch
from torch import nn

text = ['hey how are you', 'good i am fine', 'have a nice day']

# Join all the sentences together and extract the unique characters from the combined sentences
chars = set(''.join(text))
int2char = dict(enumerate(sorted(chars)))
char2int = {char: ind for ind, char in int2char.items()}

# Padding: every sentence as long as the longest one
maxlen = len(max(text, key=len))
for i in range(len(text)):
    while len(text[i]) < maxlen:
        text[i] += ' '

input_seq = []
target_seq = []
for i in range(len(text)):
    input_seq.append(text[i][:-1])   # Remove last character for input sequence
    target_seq.append(text[i][1:])   # Remove first character for target sequence
for i in range(len(text)):
    input_seq[i] = [char2int[character] for character in input_seq[i]]
    target_seq[i] = [char2int[character] for character in target_seq[i]]

dict_size = len(char2int)
seq_len = maxlen - 1
batch_size = len(text)


def one_hot_encode(sequence, dict_size, seq_len, batch_size):
    features = np.zeros((batch_size, seq_len, dict_size), dtype=np.float32)
    for i in range(batch_size):
        for u in range(seq_len):
            features[i, u, sequence[i][u]] = 1
    return features


input_seq = torch.from_numpy(one_hot_encode(input_seq, dict_size, seq_len, batch_size))
target_seq = torch.Tensor(target_seq)


class Model(nn.Module):
    def __init__(self, input_size, output_size, hidden_dim, n_layers):
        super(Model, self).__init__()

        # Defining some parameters
        self.hidden_dim = hidden_dim
        self.n_layers = n_layers

        # RNN Layer
        self.rnn = nn.RNN(input_size, hidden_dim, n_layers, batch_first=True)
        # Fully connected layer
        self.fc = nn.Linear(hidden_dim, output_size)
        self.hidden = self.init_hidden(batch_size)

    def forward(self, x):
        # Passing in the input and hidden state into the model and obtaining outputs
        out, self.hidden = self.rnn(x, self.hidden.detach())

        # Reshaping the outputs such that it can be fit into the fully connected layer
        out = out.contiguous().view(-1, self.hidden_dim)
        out = self.fc(out)

        return out, self.hidden

    def init_hidden(self, batch_size):
        # This method generates the first hidden state of zeros which we'll use in the forward pass
        hidden = torch.zeros(self.n_layers, batch_size, self.hidden_dim)
        return hidden


model = Model(input_size=dict_size, output_size=dict_size, hidden_dim=12, n_layers=1)

n_epochs = 3
lr = 0.01
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=lr)

for epoch in range(1, n_epochs + 1):
    optimizer.zero_grad()  # Clears existing gradients from previous epoch
    output, hidden = model(input_seq)
    loss = criterion(output, target_seq.view(-1).long())
    loss.backward()
    optimizer.step()  # Updates the weights accordingly
    print('Epoch: {}/{}.............'.format(epoch, n_epochs), end=' ')
    print("Loss: {:.4f}".format(loss.item()))
