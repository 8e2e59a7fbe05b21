# Source: https://github.com/yzhao062/pyod/issues/606
"""PyOD `DeepSVDD.fit` (pyod/models/deep_svdd.py, PyTorch version of 2024) with `loss.backward()` enabled.

The reporter noticed that `# loss.backward()` is commented out in the training loop (so the detector
never trains) and that uncommenting it raises "Trying to backward through the graph a second time".
The reason: the weight-decay term `w_d = 1e-6 * sum(torch.linalg.norm(w) for w in params)` is built
once, before the epoch loop, and added to every batch's loss.  The first `loss.backward()` frees
the saved tensors of those `norm` nodes; the second batch's backward walks them again.

Fix (commit 80e9ed8, "Fix DeepSVDD not training due to disabled backward pass", which closes #606):
recompute `w_d` inside the batch loop so it belongs to each batch's graph (the commit also moves
the best-model bookkeeping after the batch loop).  Stand-ins: numpy StandardScaler/check_array,
`BaseDetector` thresholding.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim
from torch.utils.data import DataLoader, TensorDataset

optimizer_dict = {'sgd': optim.SGD, 'adam': optim.Adam, 'rmsprop': optim.RMSprop, 'adamw': optim.AdamW}


def get_activation_by_name(name):
    return {'relu': nn.ReLU(), 'sigmoid': nn.Sigmoid(), 'tanh': nn.Tanh()}[name]


def check_array(X):
    return np.asarray(X, dtype=np.float64)


class StandardScaler:
    def fit_transform(self, X):
        self.mean_, self.scale_ = X.mean(0), X.std(0) + 1e-12
        return self.transform(X)

    def transform(self, X):
        return (X - self.mean_) / self.scale_


class BaseDetector:
    def __init__(self, contamination=0.1):
        self.contamination = contamination

    def _set_n_classes(self, y):
        self._classes = 2

    def _process_decision_scores(self):
        self.threshold_ = np.percentile(self.decision_scores_, 100 * (1 - self.contamination))
        self.labels_ = (self.decision_scores_ > self.threshold_).astype(int)
        return self


class InnerDeepSVDD(nn.Module):
    def __init__(self, n_features, use_ae, hidden_neurons, hidden_activation, output_activation,
                 dropout_rate, l2_regularizer):
        super(InnerDeepSVDD, self).__init__()
        self.n_features = n_features
        self.use_ae = use_ae
        self.hidden_neurons = hidden_neurons or [64, 32]
        self.hidden_activation = hidden_activation
        self.output_activation = output_activation
        self.dropout_rate = dropout_rate
        self.l2_regularizer = l2_regularizer
        self.model = self._build_model()

    def _init_c(self, X_norm, eps=0.1):
        intermediate_output = {}
        hook_handle = self.model._modules.get('net_output').register_forward_hook(
            lambda module, input, output: intermediate_output.update({'net_output': output}))
        output = self.model(X_norm)
        out = intermediate_output['net_output']
        hook_handle.remove()
        self.c = torch.mean(out, dim=0)
        self.c[(torch.abs(self.c) < eps) & (self.c < 0)] = -eps
        self.c[(torch.abs(self.c) < eps) & (self.c > 0)] = eps

    def _build_model(self):
        layers = nn.Sequential()
        layers.add_module('input_layer', nn.Linear(self.n_features, self.hidden_neurons[0], bias=False))
        layers.add_module('hidden_activation_e0', get_activation_by_name(self.hidden_activation))
        for i in range(1, len(self.hidden_neurons) - 1):
            layers.add_module(f'hidden_layer_e{i}', nn.Linear(self.hidden_neurons[i - 1], self.hidden_neurons[i], bias=False))
            layers.add_module(f'hidden_activation_e{i}', get_activation_by_name(self.hidden_activation))
            layers.add_module(f'hidden_dropout_e{i}', nn.Dropout(self.dropout_rate))
        layers.add_module('net_output', nn.Linear(self.hidden_neurons[-2], self.hidden_neurons[-1], bias=False))
        layers.add_module(f'hidden_activation_e{len(self.hidden_neurons)}', get_activation_by_name(self.hidden_activation))
        return layers

    def forward(self, x):
        return self.model(x)


class DeepSVDD(BaseDetector):
    def __init__(self, n_features, c=None, use_ae=False, hidden_neurons=None, hidden_activation='relu',
                 output_activation='sigmoid', optimizer='adam', epochs=100, batch_size=32, dropout_rate=0.2,
                 l2_regularizer=0.1, validation_size=0.1, preprocessing=True, verbose=1, random_state=None,
                 contamination=0.1):
        super(DeepSVDD, self).__init__(contamination=contamination)
        self.n_features = n_features
        self.c = c
        self.use_ae = use_ae
        self.hidden_neurons = hidden_neurons or [64, 32]
        self.hidden_activation = hidden_activation
        self.output_activation = output_activation
        self.optimizer = optimizer
        self.epochs = epochs
        self.batch_size = batch_size
        self.dropout_rate = dropout_rate
        self.l2_regularizer = l2_regularizer
        self.validation_size = validation_size
        self.preprocessing = preprocessing
        self.verbose = verbose
        self.random_state = random_state
        self.model_ = None
        self.best_model_dict = None
        if self.random_state is not None:
            torch.manual_seed(self.random_state)

    def fit(self, X, y=None):
        X = check_array(X)
        self._set_n_classes(y)
        self.n_samples_, self.n_features_ = X.shape[0], X.shape[1]

        if self.preprocessing:
            self.scaler_ = StandardScaler()
            X_norm = self.scaler_.fit_transform(X)
        else:
            X_norm = np.copy(X)
        np.random.shuffle(X_norm)

        self.model_ = InnerDeepSVDD(self.n_features, use_ae=self.use_ae, hidden_neurons=self.hidden_neurons,
                                    hidden_activation=self.hidden_activation,
                                    output_activation=self.output_activation,
                                    dropout_rate=self.dropout_rate, l2_regularizer=self.l2_regularizer)
        X_norm = torch.tensor(X_norm, dtype=torch.float32)
        if self.c is None:
            self.c = 0.0
            self.model_._init_c(X_norm)

        if self.preprocessing:
            X_norm = self.scaler_.transform(X)
        else:
            X_norm = np.copy(X)
        X_norm = torch.tensor(X_norm, dtype=torch.float32)
        dataset = TensorDataset(X_norm, X_norm)
        dataloader = DataLoader(dataset, batch_size=self.batch_size, shuffle=True)

        best_loss = float('inf')
        best_model_dict = None

        optimizer = optimizer_dict[self.optimizer](self.model_.parameters(), weight_decay=self.l2_regularizer)
        w_d = 1e-6 * sum([torch.linalg.norm(w) for w in self.model_.parameters()])

        for epoch in range(self.epochs):
            self.model_.train()
            epoch_loss = 0
            for batch_x, _ in dataloader:
                optimizer.zero_grad()
                outputs = self.model_(batch_x)
                dist = torch.sum((outputs - self.c) ** 2, dim=-1)
                if self.use_ae:
                    loss = torch.mean(dist) + w_d + torch.mean(torch.square(outputs - batch_x))
                else:
                    loss = torch.mean(dist) + w_d

                loss.backward()  # expect: GG101
                optimizer.step()
                epoch_loss += loss.item()
                if epoch_loss < best_loss:
                    best_loss = epoch_loss
                    best_model_dict = self.model_.state_dict()
            print(f"Epoch {epoch + 1}/{self.epochs}, Loss: {epoch_loss}")
        self.best_model_dict = best_model_dict

        self.decision_scores_ = self.decision_function(X)
        self._process_decision_scores()
        return self

    def decision_function(self, X):
        X = check_array(X)
        if self.preprocessing:
            X_norm = self.scaler_.transform(X)
        else:
            X_norm = np.copy(X)
        X_norm = torch.tensor(X_norm, dtype=torch.float32)
        self.model_.eval()
        with torch.no_grad():
            outputs = self.model_(X_norm)
            dist = torch.sum((outputs - self.c) ** 2, dim=-1)
        anomaly_scores = dist.numpy()
        return anomaly_scores


if __name__ == "__main__":
    np.random.seed(0)
    X_train = np.concatenate([np.random.randn(90, 6), np.random.randn(10, 6) * 4 + 3])
    clf = DeepSVDD(n_features=6, hidden_neurons=[16, 8], epochs=3, batch_size=32, random_state=0)
    clf.fit(X_train)
    print("threshold", clf.threshold_, "outliers", int(clf.labels_.sum()))
