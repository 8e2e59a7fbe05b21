# Source: https://github.com/JulesBelveze/text-summarizer/pull/8
"""text-summarizer's seq2seq (model.py, train.py) before the PR "init hidden state encoder at each
batch": the model initialises the encoder's (h, c) once and stores the state the bidirectional
LSTM returns, so the next batch starts from a state that carries the previous batch's graph;
the second batch_loss_train.backward() walks into that freed graph and torch raises "Trying to
backward through the graph a second time". The stored-state forward is reconstructed from the PR
title and the model it changed; Encoder, Decoder and train_epoch follow the repository (plain
decoder, smaller sizes); the CNN/DailyMail batches are random token ids. Fix (the PR's): start
every batch from encoder.init_hidden()."""
import random

import torch
import torch.nn as nn

device = torch.device("cpu")
voc_size = 50
hidden_dim = 8
batch_size = 4
MAX_LEN_HIGHLIGHT = 5


class Encoder(nn.Module):
    def __init__(self):
        super(Encoder, self).__init__()
        self.num_layer = 1
        self.embeddings = nn.Embedding(num_embeddings=voc_size, embedding_dim=hidden_dim)
        self.lstm = nn.LSTM(input_size=hidden_dim, hidden_size=hidden_dim, num_layers=1,
                            bidirectional=True, batch_first=True)

    def init_hidden(self):
        return (torch.zeros(2 * self.num_layer, batch_size, hidden_dim, dtype=torch.float, device=device),
                torch.zeros(2 * self.num_layer, batch_size, hidden_dim, dtype=torch.float, device=device))

    def forward(self, input, state):
        embedded = self.embeddings(input)
        output, (hidden, cell) = self.lstm(embedded, state)
        return output, (hidden, cell)


class Decoder(nn.Module):
    def __init__(self):
        super(Decoder, self).__init__()
        self.embeddings = nn.Embedding(num_embeddings=voc_size, embedding_dim=hidden_dim)
        self.lstm = nn.LSTM(input_size=hidden_dim, hidden_size=hidden_dim * 2, num_layers=1,
                            bidirectional=False, batch_first=True)
        self.fc = nn.Linear(in_features=hidden_dim * 2, out_features=voc_size)
        self.logsoftmax = nn.LogSoftmax(dim=1)

    def forward(self, input, hidden, cell):
        embedded = self.embeddings(input).unsqueeze(1)
        output, (hidden, cell) = self.lstm(embedded, (hidden, cell))
        output = self.fc(output.squeeze(1))
        output = self.logsoftmax(output)
        return output, (hidden, cell)


class Seq2Seq(nn.Module):
    def __init__(self, encoder, decoder):
        super(Seq2Seq, self).__init__()
        self.encoder = encoder
        self.decoder = decoder
        self.state_encoder = self.encoder.init_hidden()

    def forward(self, input, target):
        encoder_output, self.state_encoder = self.encoder(input, self.state_encoder)
        encoder_hidden, encoder_cell = self.state_encoder

        encoder_l, encoder_r = encoder_hidden[0], encoder_hidden[1]
        decoder_hidden = torch.cat((encoder_l, encoder_r), 1).unsqueeze(0)
        cell_l, cell_r = encoder_cell[0], encoder_cell[1]
        decoder_cell = torch.cat((cell_l, cell_r), 1).unsqueeze(0)

        decoder_input = torch.tensor([2] * batch_size, dtype=torch.long, device=device)
        batch_output = torch.Tensor().to(device)
        for i in range(MAX_LEN_HIGHLIGHT):
            decoder_output, (decoder_hidden, decoder_cell) = self.decoder(decoder_input, decoder_hidden, decoder_cell)
            batch_output = torch.cat((batch_output, decoder_output.unsqueeze(1)), 1)
            if random.uniform(0, 1) > .5 and self.training:
                decoder_input = target[:, i]
            else:
                decoder_input = decoder_output.argmax(dim=1)
        return batch_output


def train_epoch(train_iter, criterion, model, optimizer):
    epoch_loss_train = 0
    model.train()
    for i, batch in enumerate(train_iter):
        batch_loss_train = 0
        optimizer.zero_grad()

        story, highlight = batch
        story = story.to(device)
        highlight = highlight.to(device)

        output = model(story, highlight)
        for sequence, target in zip(output, highlight):
            batch_loss_train += criterion(sequence, target)
        batch_loss_train.backward()  # expect: GG101
        epoch_loss_train += batch_loss_train.item()
        optimizer.step()
    return epoch_loss_train / len(train_iter)


if __name__ == "__main__":
    random.seed(0)
    train_iter = [(torch.randint(0, voc_size, (batch_size, 7)), torch.randint(0, voc_size, (batch_size, MAX_LEN_HIGHLIGHT)))
                  for _ in range(3)]
    model = Seq2Seq(Encoder(), Decoder())
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    criterion = nn.NLLLoss()
    for epoch in range(1):
        print(epoch, train_epoch(train_iter, criterion, model, optimizer))
