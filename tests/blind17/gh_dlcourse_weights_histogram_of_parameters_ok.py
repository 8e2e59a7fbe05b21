# Source: https://github.com/Atcold/pytorch-Deep-Learning/commit/4a47d549
"""Fixed twin (the commit's fix: each toggle keeps `weights.detach().numpy()`). Atcold's NYU Deep Learning course, 12-regularization.ipynb before "Detach variable for plotting
on regularization": after each training run the notebook flattens every parameter into `weights`
(`torch.cat((param_group.view(-1), weights))` in a loop, here one `torch.cat`) and keeps it per regularization toggle; the L1 toggle
keeps `weights.detach().numpy()`, but the L2 toggle keeps `weights_L2 = weights` itself, so the last
cell's `plt.hist((weights_nothing, weights_L1, weights_L2.reshape(-1)), ...)` converts a tensor that
requires grad and raises "Can't call numpy() on Tensor that requires grad". Fix (the commit's):
`weights.detach().numpy()` for every toggle. The IMDB/torchtext pipeline is random token batches,
the toggles are run in turn instead of by hand, and `np.histogram` stands in for `plt.hist` (both
convert their input with numpy). CPU, tiny sizes.
"""
import numpy as np
import torch
import torch.nn as nn

torch.manual_seed(1337)
max_len = 8
num_words = 20
batch_size = 16


class FeedforwardNeuralNetModel(nn.Module):
    def __init__(self, input_dim, embedding_dim, hidden_dim, output_dim):
        super(FeedforwardNeuralNetModel, self).__init__()
        self.embedding = nn.Embedding(input_dim, embedding_dim)
        self.fc1 = nn.Linear(embedding_dim * embedding_dim, hidden_dim)
        self.fc2 = nn.Linear(hidden_dim, output_dim)

    def forward(self, x, dropout=False):
        embedded = self.embedding(x)
        embedded = embedded.view(-1, embedding_dim * embedding_dim)
        out = self.fc1(embedded)
        out = torch.relu(out)
        if dropout:  # Toggle 3: Dropout
            out = torch.dropout(out, 0.8, self.training)
        out = self.fc2(out)
        out = torch.sigmoid(out)
        return out


train_loader = [(torch.randint(0, num_words + 2, (batch_size, max_len)), torch.randint(0, 2, (batch_size,)).float())
                for _ in range(3)]
input_dim = num_words + 2
embedding_dim = max_len
hidden_dim = 32
output_dim = 1


def run(toggle):
    model = FeedforwardNeuralNetModel(input_dim, embedding_dim, hidden_dim, output_dim)
    criterion = nn.BCELoss()
    if toggle == "L2":  # Toggle 2: L2 Norm option - this is called weight decay
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-3, weight_decay=0.005)
    else:
        optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(2):
        for i, (samples, labels) in enumerate(train_loader):
            model.train()
            samples = samples.view(-1, max_len)
            labels = labels.view(-1, 1)
            optimizer.zero_grad()
            outputs = model(samples, dropout=toggle == "dropout")
            loss = criterion(outputs, labels)
            if toggle == "L1":  # Toggle 1: L1 norm, add to original loss
                fc1_params = torch.cat([x.view(-1) for x in model.fc1.parameters()])
                loss += 0.001 * torch.norm(fc1_params, 1)
            loss.backward()
            optimizer.step()
    return model


# ---- the weights cell, once per toggle ----
model = run("nothing")
# (the notebook prepends each flattened parameter to `weights` in a loop; one cat of them, last first)
weights = torch.cat([param_group.view(-1) for param_group in list(model.parameters())][::-1])
# Toggle 0: No regularization
weights_nothing = weights.detach().numpy()

model = run("L1")
# (the notebook prepends each flattened parameter to `weights` in a loop; one cat of them, last first)
weights = torch.cat([param_group.view(-1) for param_group in list(model.parameters())][::-1])
# Toggle 1: L1 norm on FC1
weights_L1 = weights.detach().numpy()

model = run("L2")
# (the notebook prepends each flattened parameter to `weights` in a loop; one cat of them, last first)
weights = torch.cat([param_group.view(-1) for param_group in list(model.parameters())][::-1])
# Toggle 2: L2 norm
weights_L2 = weights.detach().numpy()

# ---- Show weight distribution (plt.hist stand-in: the histogram of each) ----
for name, w in zip(('No-reg', 'L1', 'L2'), (weights_nothing, weights_L1, weights_L2)):
    counts, edges = np.histogram(w.reshape(-1), 49, range=(-.5, .5))
    print(name, counts.sum())
