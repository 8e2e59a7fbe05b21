# Source: https://discuss.pytorch.org/t/runtimeerror-one-of-the-variables-needed-for-gradient-computation-has-been-modified-by-an-inplace-operation-torch-cuda-floattensor-100-2-6-which-is-output-0-of-sigmoidbackward0-is-at-version-6-expected-version-0-instead-hint-the-backtrace-fur/189665/2
"""The fix the answer points to: do not write into the Sigmoid's output, which its backward
needs. The padded steps are masked out of place, in one product over all steps, which gives the
same probabilities as a new tensor."""
import torch
import torch.nn as nn


class StepTagger(nn.Module):
    def __init__(self, n_feat, n_labels):
        super().__init__()
        self.rnn = nn.GRU(n_feat, 32, batch_first=True)
        self.head = nn.Linear(32, n_labels)

    def forward(self, x):
        h, _ = self.rnn(x)                            # (B, T, 32)
        return torch.sigmoid(self.head(h).transpose(1, 2))  # (B, n_labels, T)


model = StepTagger(n_feat=5, n_labels=2)
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
criterion = nn.BCELoss()

for epoch in range(2):
    x = torch.randn(100, 6, 5)
    lengths = torch.randint(1, 7, (100,))
    valid = (torch.arange(6)[None, :] < lengths[:, None]).float()  # (B, T)
    target = torch.randint(0, 2, (100, 2, 6)).float() * valid[:, None, :]

    probs = model(x)
    probs = probs * valid[:, None, :]   # zero the padded steps
    loss = criterion(probs, target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(epoch, loss.item())
