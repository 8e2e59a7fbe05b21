# Source: https://discuss.pytorch.org/t/shap-values-runtimeerror-grad-can-be-implicitly-created-only-for-scalar-outputs/138762
"""The fix: the model explained must return one score per class and sample. The classifier
returns the last time step's logits, `self.out(seq[:, -1])` (the one the training loop already
used), so each `outputs[:, idx]` value is a scalar and DeepExplainer's autograd.grad works."""
import numpy as np
import torch
import torch.nn as nn


class DeepExplainer:
    """Stand-in for shap.DeepExplainer (PyTorch): gradients of each selected output w.r.t. inputs."""

    def __init__(self, model, data):
        self.model = model
        self.data = data

    def gradient(self, idx, inputs):
        self.model.zero_grad()
        X = [x.requires_grad_() for x in inputs]
        outputs = self.model(*X)
        selected = [val for val in outputs[:, idx]]
        grads = []
        for idx, x in enumerate(X):
            grad = torch.autograd.grad(selected, x, retain_graph=True if idx + 1 < len(X) else None, allow_unused=True)[0]
            grads.append(grad.cpu().numpy())
        return grads

    def shap_values(self, X, n_outputs=2):
        output_phis = []
        for feature_ind in range(n_outputs):
            phis = np.zeros(X.shape, dtype=np.float32)
            for j in range(X.shape[0]):
                tiled = X[j:j + 1].repeat(self.data.shape[0], *([1] * (X.dim() - 1)))
                joint_x = torch.cat([tiled, self.data], 0)
                sample_phis = self.gradient(feature_ind, [joint_x])
                diff = (X[j:j + 1] - self.data).numpy()
                phis[j] = (sample_phis[0][:self.data.shape[0]] * diff).mean(0)
            output_phis.append(phis)
        return output_phis


class SequenceClassifier(nn.Module):
    def __init__(self, n_features=4, hidden=8, n_classes=2):
        super().__init__()
        self.lstm = nn.LSTM(n_features, hidden, batch_first=True)
        self.out = nn.Linear(hidden, n_classes)

    def forward(self, x):
        seq, _ = self.lstm(x)
        return self.out(seq[:, -1])


model = SequenceClassifier()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
loss_fn = nn.CrossEntropyLoss()
sequences = torch.randn(16, 5, 4)
labels = torch.randint(0, 2, (16,))
for epoch in range(3):
    optimizer.zero_grad()
    logits = model(sequences)
    loss = loss_fn(logits, labels)
    loss.backward()
    optimizer.step()

model.eval()
background = sequences[:4].detach()
sequences_to_explain = sequences[4:6].detach()
e = DeepExplainer(model, background)
shap_values = e.shap_values(sequences_to_explain)
print([v.shape for v in shap_values])
