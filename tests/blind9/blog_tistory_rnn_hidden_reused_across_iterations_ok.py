# Source: https://jh-bk.tistory.com/13
"""The post's remedy for the recurrent case: cut the carried tensor off the old graph before it
enters the next iteration (detach the hidden state), so each backward walks only its own
iteration's graph."""
import torch
import torch.nn as nn


class SeqClassifier(nn.Module):
    def __init__(self, n_in=6, n_hidden=12, n_classes=3):
        super().__init__()
        self.rnn = nn.GRU(n_in, n_hidden, batch_first=True)
        self.fc = nn.Linear(n_hidden, n_classes)
        self.hidden = None

    def forward(self, x):
        hidden = self.hidden.detach() if self.hidden is not None else None
        out, self.hidden = self.rnn(x, hidden)
        return self.fc(out[:, -1])


model = SeqClassifier()
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)

for iteration in range(4):
    x = torch.randn(4, 5, 6)
    y = torch.randint(0, 3, (4,))
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    print(iteration, loss.item())
