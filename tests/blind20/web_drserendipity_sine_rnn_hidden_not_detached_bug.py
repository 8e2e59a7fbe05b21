# Source: https://drserendipity.com/notes/notes_by_subjects/artificial_intelligence/artificial-intelligence-for-trading/2-ai-algorithms-in-trading/2-11-recurrent-neural-networks/11-03-training-memory-v1/
"""Udacity sine-wave RNN: the hidden state is carried across training steps without being detached.

The course notes walk through training a one-layer ``nn.RNN`` + ``nn.Linear``
that predicts the next value of a sine wave: ``train`` starts with
``hidden = None``, generates 20 sine values per step on the fly, runs
``prediction, hidden = rnn(x_tensor, hidden)`` and feeds the returned hidden
state into the next step (the model's "memory").  The lesson's code then
replaces the hidden state by its data ("make a new variable for hidden and
detach the hidden state from its history, this way we don't backpropagate
through the entire history").  Without that line, as here, the second step's
``loss.backward()`` walks back into the first step's RNN graph, whose saved
tensors the first backward already freed, and raises "Trying to backward
through the graph a second time".

Fix (the lesson's line): ``hidden = hidden.data`` (or ``hidden.detach()``)
right after the forward pass (see the _ok twin).  A no-op stand-in replaces
matplotlib.
"""
import numpy as np
import torch
from torch import nn

torch.manual_seed(0)


class _PltStandIn:
    def plot(self, *args, **kwargs):
        pass

    def show(self):
        pass


plt = _PltStandIn()


class RNN(nn.Module):
    def __init__(self, input_size, output_size, hidden_dim, n_layers):
        super(RNN, self).__init__()
        self.hidden_dim = hidden_dim
        # define an RNN with specified parameters
        # batch_first means that the first dim of the input and output will be the batch_size
        self.rnn = nn.RNN(input_size, hidden_dim, n_layers, batch_first=True)
        # last, fully-connected layer
        self.fc = nn.Linear(hidden_dim, output_size)

    def forward(self, x, hidden):
        # x (batch_size, seq_length, input_size)
        # hidden (n_layers, batch_size, hidden_dim)
        # r_out (batch_size, time_step, hidden_size)
        batch_size = x.size(0)
        # get RNN outputs
        r_out, hidden = self.rnn(x, hidden)
        # shape output to be (batch_size*seq_length, hidden_dim)
        r_out = r_out.view(-1, self.hidden_dim)
        # get final output
        output = self.fc(r_out)
        return output, hidden


seq_length = 20

# decide on hyperparameters
input_size = 1
output_size = 1
hidden_dim = 32
n_layers = 1

# instantiate an RNN
rnn = RNN(input_size, output_size, hidden_dim, n_layers)
print(rnn)

# MSE loss and Adam optimizer with a learning rate of 0.01
criterion = nn.MSELoss()
optimizer = torch.optim.Adam(rnn.parameters(), lr=0.01)


# train the RNN
def train(rnn, n_steps, print_every):
    # initialize the hidden state
    hidden = None
    for batch_i, step in enumerate(range(n_steps)):
        # defining the training data
        time_steps = np.linspace(step * np.pi, (step + 1) * np.pi, seq_length + 1)
        data = np.sin(time_steps)
        data.resize((seq_length + 1, 1))  # input_size=1

        x = data[:-1]
        y = data[1:]

        # convert data into Tensors
        x_tensor = torch.Tensor(x).unsqueeze(0)  # unsqueeze gives a 1, batch_size dimension
        y_tensor = torch.Tensor(y)

        # outputs from the rnn
        prediction, hidden = rnn(x_tensor, hidden)

        # calculate the loss
        loss = criterion(prediction, y_tensor)
        # zero gradients
        optimizer.zero_grad()
        # perform backprop and update weights
        loss.backward()  # expect: GG101
        optimizer.step()

        # display loss and predictions
        if batch_i % print_every == 0:
            print('Loss: ', loss.item())
            plt.plot(time_steps[1:], x, 'r.')  # input
            plt.plot(time_steps[1:], prediction.data.numpy().flatten(), 'b.')  # predictions
            plt.show()

    return rnn


# train the rnn and monitor results
n_steps = 5
print_every = 2

trained_rnn = train(rnn, n_steps, print_every)
