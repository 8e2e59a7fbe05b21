# Source: https://blog.youkuaiyun.com/windhawk_fly/article/details/143405685
"""The blog's LSTM loop, fixed where the post narrows the error down, the hidden state: the state
handed to the next batch is detached, `h0, c0 = h0.detach(), c0.detach()` (truncated
backpropagation through time), so each loss.backward() walks only its own batch, without
retain_graph."""
import torch
import torch.nn as nn

EPOCH = 2
num_layers = 1
batch_size = 4
seq_len = 5
embedding_dim = 6
hidden_dim = 8


class LSTMNet(nn.Module):
    def __init__(self, embedding_dim, hidden_dim, num_layers):
        super().__init__()
        self.lstm = nn.LSTM(embedding_dim, hidden_dim, num_layers, batch_first=True)
        self.fc = nn.Linear(hidden_dim, embedding_dim)

    def forward(self, x, h0, c0):
        out, (hn, cn) = self.lstm(x, (h0, c0))
        return self.fc(out), (hn, cn)


lstm = LSTMNet(embedding_dim, hidden_dim, num_layers)
loss_fn = nn.MSELoss()
optimizer = torch.optim.Adam(lstm.parameters(), lr=1e-3)
data_loader = [(torch.randn(batch_size, seq_len, embedding_dim),
                torch.randn(batch_size * seq_len, embedding_dim)) for _ in range(4)]
batch_count = len(data_loader)

for epoch in range(EPOCH):
    batch_num = 0
    h0 = torch.randn((num_layers, batch_size, hidden_dim), requires_grad=False)
    c0 = torch.randn((num_layers, batch_size, hidden_dim), requires_grad=False)
    for batch in data_loader:
        optimizer.zero_grad()
        output, (h0, c0) = lstm(batch[0], h0, c0)
        h0, c0 = h0.detach(), c0.detach()
        loss = loss_fn(output.reshape(-1, embedding_dim), batch[1])
        loss.backward()
        optimizer.step()
        batch_num += 1
        if (batch_num) % min(10, batch_count // 2) == 0:
            print(f'epoch {epoch} : batch {batch_num} : {loss.item():.4f}')
