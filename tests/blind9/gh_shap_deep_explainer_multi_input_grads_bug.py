# Source: https://github.com/shap/shap/pull/684
"""shap's PyTorchDeepExplainer before the pull request, used on a model with two inputs:
gradient() runs the model once and asks torch.autograd.grad for the gradient of the selected
outputs with respect to each input in turn; the first call frees the graph, so the second input's
call walks it again and raises. The explainer keeps shap's gradient()/shap_values() (the DeepLIFT
multiplier hooks, which only rescale gradients, are left out); the model is a small two-input
classifier trained for a few steps on random data before it is explained."""
import numpy as np
import torch
from torch import nn


class PyTorchDeepExplainer:

    def __init__(self, model, data):
        # check if we have multiple inputs
        self.multi_input = False
        if type(data) == list:
            self.multi_input = True
        if type(data) != list:
            data = [data]
        self.data = data
        self.model = model.eval()

        self.multi_output = False
        self.num_outputs = 1
        with torch.no_grad():
            outputs = model(*data)
            if outputs.shape[1] > 1:
                self.multi_output = True
                self.num_outputs = outputs.shape[1]
            self.expected_value = outputs.mean(0).numpy()

    def gradient(self, idx, inputs):
        self.model.zero_grad()
        X = [x.requires_grad_() for x in inputs]
        outputs = self.model(*X)
        selected = [val for val in outputs[:, idx]]
        grads = [torch.autograd.grad(selected, x)[0].cpu().numpy() for x in X]  # expect: GG101
        return grads

    def shap_values(self, X):
        if not self.multi_input:
            X = [X]
        model_output_ranks = (torch.ones((X[0].shape[0], self.num_outputs)).int() *
                              torch.arange(0, self.num_outputs).int())
        output_phis = []
        for i in range(model_output_ranks.shape[1]):
            phis = [np.zeros(X[k].shape) for k in range(len(X))]
            for j in range(X[0].shape[0]):
                # tile the inputs to line up with the background data samples
                tiled_X = [X[l][j:j + 1].repeat(
                    (self.data[l].shape[0],) + tuple([1 for k in range(len(X[l].shape) - 1)])) for l in range(len(X))]
                joint_x = [torch.cat((tiled_X[l], self.data[l]), dim=0) for l in range(len(X))]
                # run attribution computation graph
                feature_ind = model_output_ranks[j, i]
                sample_phis = self.gradient(feature_ind, joint_x)
                for l in range(len(X)):
                    phis[l][j] = (torch.from_numpy(sample_phis[l][self.data[l].shape[0]:])
                                  * (X[l][j: j + 1] - self.data[l])).mean(0)
            output_phis.append(phis[0] if not self.multi_input else phis)
        if not self.multi_output:
            return output_phis[0]
        return output_phis


class TwoInputNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.tabular = nn.Sequential(nn.Linear(5, 8), nn.ReLU())
        self.text = nn.Sequential(nn.Linear(6, 8), nn.ReLU())
        self.head = nn.Linear(16, 3)

    def forward(self, x1, x2):
        return torch.softmax(self.head(torch.cat((self.tabular(x1), self.text(x2)), dim=-1)), dim=-1)


def train(model, steps=5):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    for _ in range(steps):
        x1, x2, y = torch.randn(16, 5), torch.randn(16, 6), torch.randint(0, 3, (16,))
        loss = nn.functional.nll_loss(torch.log(model(x1, x2)), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    model = TwoInputNet()
    train(model)
    background = [torch.randn(8, 5), torch.randn(8, 6)]
    explainer = PyTorchDeepExplainer(model, background)
    shap_values = explainer.shap_values([torch.randn(2, 5), torch.randn(2, 6)])
    print([[p.shape for p in phis] for phis in shap_values])
