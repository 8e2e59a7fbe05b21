# Source: https://discuss.pytorch.org/t/runtimeerror-one-of-the-variables-needed-for-gradient-computation-has-been-modified-by-an-inplace-operation-torch-cuda-floattensor-100-2-6-which-is-output-0-of-sigmoidbackward0-is-at-version-6-expected-version-0-instead-hint-the-backtrace-fur/189665/2
"""The forum thread on "[torch.cuda.FloatTensor [100, 2, 6]], which is output 0 of
SigmoidBackward0, is at version 6; expected version 0 instead". The answer reads the message: a
[100, 2, 6] tensor that comes out of a Sigmoid is modified in place six times before
`.backward()` (Sigmoid saves its output for its gradient). Reconstructed from that reading: a
tagger predicts, for a batch of 100 sequences, 2 labels at each of 6 time steps through a Sigmoid,
and a loop over the 6 steps masks the padded steps by writing into the probabilities."""
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
    for t in range(6):
        probs[:, :, t] = probs[:, :, t] * valid[:, t:t + 1]   # zero the padded steps
    loss = criterion(probs, target)
    optimizer.zero_grad()
    loss.backward()  # expect: GG103
    optimizer.step()
    print(epoch, loss.item())
