# Source: https://blog.youkuaiyun.com/windhawk_fly/article/details/143405685
"""The blog's LSTM experiment: h0 and c0 are drawn once per epoch, and every batch feeds the
LSTM's returned state back in, `output, (h0, c0) = lstm(batch[0], h0, c0)`. The state returned by
the first batch hangs on that batch's graph, which its loss.backward() frees, so the second
batch's loss.backward() reaches it again and raises "Trying to backward through the graph a second
time" (the post then adds retain_graph=True, which only turns it into an in-place error after
optimizer.step()). The post's loop is kept; the model wraps nn.LSTM and a Linear head back to the
embedding size, on random sequences with random regression targets."""
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
        loss = loss_fn(output.reshape(-1, embedding_dim), batch[1])
        loss.backward()  # expect: GG101
        optimizer.step()
        batch_num += 1
        if (batch_num) % min(10, batch_count // 2) == 0:
            print(f'epoch {epoch} : batch {batch_num} : {loss.item():.4f}')
