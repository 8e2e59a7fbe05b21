# Source: https://learn.biosrag.com/ai/rnn-training-4.html
"""The post's working pattern: the hidden state is re-wrapped (detached) at the start of every
batch, before the next segment that will call backward(), so each backward only walks the current
batch's graph (truncated BPTT); the state's values still carry from batch to batch."""
import torch
import torch.nn as nn

vocab, embed_dim, hidden_dim, batch_size, bptt = 20, 8, 16, 4, 6


class CharLSTM(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(vocab, embed_dim)
        self.cell = nn.LSTMCell(embed_dim, hidden_dim)
        self.decoder = nn.Linear(hidden_dim, vocab)

    def init_hidden(self, batch_size):
        return (torch.zeros(batch_size, hidden_dim), torch.zeros(batch_size, hidden_dim))

    def forward(self, x, hidden):
        h, c = self.cell(self.embed(x), hidden)
        return self.decoder(h), (h, c)


model = CharLSTM()
criterion = nn.CrossEntropyLoss()
optim = torch.optim.SGD(model.parameters(), lr=0.05)
text = torch.randint(0, vocab, (batch_size, 3 * bptt + 1))
input_batches = [text[:, i:i + bptt] for i in range(0, 3 * bptt, bptt)]
target_batches = [text[:, i + 1:i + bptt + 1] for i in range(0, 3 * bptt, bptt)]

iterations = 2
hidden = model.init_hidden(batch_size)
for i in range(iterations):
    for batch_i in range(len(input_batches)):
        hidden = (hidden[0].detach(), hidden[1].detach())
        loss = 0
        for t in range(bptt):
            output, hidden = model(input_batches[batch_i][:, t], hidden)
            loss = loss + criterion(output, target_batches[batch_i][:, t])
        optim.zero_grad()
        loss.backward()
        optim.step()
    print(i, loss.item())
