# Source: https://php.bkmy88.com/faq/1835025.html (a user's multi-class training loop and the
# answer to its "element 0 of tensors does not require grad" error)
"""Multi-class classifier whose training loop feeds the loss the hard predictions,
softmax(logits).argmax(dim=1) cast to float, instead of the logits: argmax has no gradient, so the
loss has no graph and loss.backward() fails."""
import torch
import torch.nn as nn

torch.manual_seed(42)
NUM_CLASSES, NUM_FEATURES = 4, 2
X_train = torch.randn(40, NUM_FEATURES)
y_train = (X_train[:, 0] > 0).long() + 2 * (X_train[:, 1] > 0).long()


class BlobModel(nn.Module):
    def __init__(self, input_features, output_features, hidden_units=8):
        super().__init__()
        self.linear_layer_stack = nn.Sequential(
            nn.Linear(input_features, hidden_units), nn.ReLU(),
            nn.Linear(hidden_units, hidden_units), nn.ReLU(),
            nn.Linear(hidden_units, output_features))

    def forward(self, x):
        return self.linear_layer_stack(x)


def accuracy(y_true, y_pred):
    return (torch.eq(y_true, y_pred).sum().item() / len(y_pred)) * 100


model = BlobModel(NUM_FEATURES, NUM_CLASSES)
loss_fn = nn.MSELoss()
optimiser = torch.optim.SGD(model.parameters(), lr=0.1)
Epochs = 3

for epoch in range(Epochs):
    model.train()
    train_logits = model(X_train)
    train_preds_probs = torch.softmax(train_logits, dim=1).argmax(dim=1).type(torch.float32)
    loss = loss_fn(train_preds_probs, y_train.type(torch.float32))
    train_accu = accuracy(y_train, train_preds_probs)
    optimiser.zero_grad()
    loss.backward()  # expect: GG104
    optimiser.step()
