# Source: https://github.com/sgadgil6/cnslab_fmri/issues/4
"""fMRI LSTM classifier with the fix from the issue's pull request (#5): each batch starts the LSTM
from a zero state (self.lstm(x)), so no batch's graph reaches an earlier one."""
import torch
import torch.nn as nn

BATCH, STEPS, ROIS = 4, 6, 5


class fMRI_LSTM(nn.Module):
    def __init__(self, hidden_dim, input_dim):
        super().__init__()
        self.hidden_dim = hidden_dim
        self.lstm = nn.LSTM(input_dim, hidden_dim, num_layers=1, batch_first=True)
        self.linear = nn.Linear(hidden_dim, 1)
        self.hidden = self.init_hidden()
        self.dropout = nn.Dropout(p=0.2)
        self.activate = nn.Sigmoid()

    def init_hidden(self):
        return (torch.randn(1, BATCH, self.hidden_dim), torch.randn(1, BATCH, self.hidden_dim))

    def forward(self, x):
        lstm_out, self.hidden = self.lstm(x)  # no need to pass the previous hidden state
        lstm_out = lstm_out[:, -1, :]
        out = self.dropout(lstm_out)
        return self.activate(self.linear(out)).squeeze(1)


model = fMRI_LSTM(hidden_dim=8, input_dim=ROIS)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
criterion = nn.BCELoss()

for epoch in range(2):
    for batch in range(2):
        x = torch.randn(BATCH, STEPS, ROIS)
        label = torch.randint(0, 2, (BATCH,)).float()
        optimizer.zero_grad()
        loss = criterion(model(x), label)
        loss.backward()
        optimizer.step()
