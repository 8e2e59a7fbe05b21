# Source: https://jh-bk.tistory.com/13
"""The Korean blog post "[PyTorch] RuntimeError: Trying to backward through the graph a second
time": its common case of a graph walked twice by mistake is "reusing, within the training
iterations, a tensor that already takes part in a computational graph (recurrent layer)" - the
hidden state that the recurrent layer returned is fed to the next iteration, so that
iteration's backward runs back into the previous, already freed, graph. A GRU sequence
classifier over random mini-batches, its hidden state kept on the model between batches."""
import torch
import torch.nn as nn


class SeqClassifier(nn.Module):
    def __init__(self, n_in=6, n_hidden=12, n_classes=3):
        super().__init__()
        self.rnn = nn.GRU(n_in, n_hidden, batch_first=True)
        self.fc = nn.Linear(n_hidden, n_classes)
        self.hidden = None

    def forward(self, x):
        out, self.hidden = self.rnn(x, self.hidden)
        return self.fc(out[:, -1])


model = SeqClassifier()
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

for iteration in range(4):
    x = torch.randn(4, 5, 6)
    y = torch.randint(0, 3, (4,))
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()  # expect: GG101
    optimizer.step()
    print(iteration, loss.item())
