# Source: https://github.com/shenweichen/DeepCTR-Torch/issues/88
"""https://github.com/shenweichen/DeepCTR-Torch/issues/88
DeepCTR-Torch 0.2.1's DeepFM example (run_classification_criteo.py) on torch 1.5: the models'
`__init__` calls `add_regularization_loss(...)`, which computes the L2 norms of the embedding,
linear and DNN weights once and keeps them in `self.reg_loss`; `fit` adds that tensor to every
batch's loss and calls `total_loss.backward(retain_graph=True)`. After the first
`optim.step()` updated the weights in place, the second batch's backward goes back through the
norms, which saved the old weights: "one of the variables needed for gradient computation has been
modified by an inplace operation: [torch.FloatTensor [.., 1]] is at version 2". The maintainers'
fix (v0.2.2-v0.2.4) keeps only the weight lists (`add_regularization_weight`) and computes
`get_regularization_loss()` in every batch, with a plain `backward()`. Criteo data, pandas,
sklearn and tqdm are small stand-ins written here (random sparse and dense features). One change:
0.2.1 passes `self.dnn_linear.weight` itself, whose loop yields row views (unbind), and torch 2.13
meets those first and raises a different view error; here the weight is passed in a list."""
import time
from collections import OrderedDict, namedtuple

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.data as Data
from torch.utils.data import DataLoader


# ---- deepctr_torch.inputs ----
class SparseFeat(namedtuple('SparseFeat', ['name', 'vocabulary_size', 'embedding_dim', 'embedding_name'])):
    def __new__(cls, name, vocabulary_size, embedding_dim=4, embedding_name=None):
        return super(SparseFeat, cls).__new__(cls, name, vocabulary_size, embedding_dim, embedding_name or name)


class DenseFeat(namedtuple('DenseFeat', ['name', 'dimension'])):
    def __new__(cls, name, dimension=1):
        return super(DenseFeat, cls).__new__(cls, name, dimension)


def build_input_features(feature_columns):
    features = OrderedDict()
    start = 0
    for feat in feature_columns:
        if feat.name in features:
            continue
        dim = 1 if isinstance(feat, SparseFeat) else feat.dimension
        features[feat.name] = (start, start + dim)
        start += dim
    return features


def create_embedding_matrix(feature_columns, init_std=0.0001, linear=False, sparse=False, device='cpu'):
    sparse_feature_columns = [fc for fc in feature_columns if isinstance(fc, SparseFeat)]
    embedding_dict = nn.ModuleDict(
        {feat.embedding_name: nn.Embedding(feat.vocabulary_size, feat.embedding_dim if not linear else 1,
                                           sparse=sparse) for feat in sparse_feature_columns})
    for tensor in embedding_dict.values():
        nn.init.normal_(tensor.weight, mean=0, std=init_std)
    return embedding_dict.to(device)


def combined_dnn_input(sparse_embedding_list, dense_value_list):
    sparse_dnn_input = torch.flatten(torch.cat(sparse_embedding_list, dim=-1), start_dim=1)
    dense_dnn_input = torch.flatten(torch.cat(dense_value_list, dim=-1), start_dim=1)
    return torch.cat([sparse_dnn_input, dense_dnn_input], dim=-1)


# ---- deepctr_torch.layers ----
class FM(nn.Module):
    def forward(self, inputs):
        square_of_sum = torch.pow(torch.sum(inputs, dim=1, keepdim=True), 2)
        sum_of_square = torch.sum(inputs * inputs, dim=1, keepdim=True)
        cross_term = square_of_sum - sum_of_square
        return 0.5 * torch.sum(cross_term, dim=2, keepdim=False)


class DNN(nn.Module):
    def __init__(self, inputs_dim, hidden_units, activation='relu', l2_reg=0, dropout_rate=0, use_bn=False,
                 init_std=0.0001, device='cpu'):
        super(DNN, self).__init__()
        hidden_units = [inputs_dim] + list(hidden_units)
        self.linears = nn.ModuleList([nn.Linear(hidden_units[i], hidden_units[i + 1])
                                      for i in range(len(hidden_units) - 1)])
        self.dropout = nn.Dropout(dropout_rate)
        for name, tensor in self.linears.named_parameters():
            if 'weight' in name:
                nn.init.normal_(tensor, mean=0, std=init_std)
        self.to(device)

    def forward(self, inputs):
        deep_input = inputs
        for fc in self.linears:
            deep_input = self.dropout(F.relu(fc(deep_input)))
        return deep_input


class PredictionLayer(nn.Module):
    def __init__(self, task='binary', use_bias=True):
        super(PredictionLayer, self).__init__()
        self.task = task
        if use_bias:
            self.bias = nn.Parameter(torch.zeros((1,)))

    def forward(self, X):
        output = X + self.bias
        if self.task == "binary":
            output = torch.sigmoid(output)
        return output


# ---- deepctr_torch.models.basemodel ----
class Linear(nn.Module):
    def __init__(self, feature_columns, feature_index, init_std=0.0001, device='cpu'):
        super(Linear, self).__init__()
        self.feature_index = feature_index
        self.sparse_feature_columns = [x for x in feature_columns if isinstance(x, SparseFeat)]
        self.dense_feature_columns = [x for x in feature_columns if isinstance(x, DenseFeat)]
        self.embedding_dict = create_embedding_matrix(feature_columns, init_std, linear=True, device=device)
        if len(self.dense_feature_columns) > 0:
            self.weight = nn.Parameter(torch.Tensor(sum(fc.dimension for fc in self.dense_feature_columns), 1)).to(
                device)
            torch.nn.init.normal_(self.weight, mean=0, std=init_std)

    def forward(self, X):
        sparse_embedding_list = [self.embedding_dict[feat.embedding_name](
            X[:, self.feature_index[feat.name][0]:self.feature_index[feat.name][1]].long()) for
            feat in self.sparse_feature_columns]
        dense_value_list = [X[:, self.feature_index[feat.name][0]:self.feature_index[feat.name][1]] for feat in
                            self.dense_feature_columns]
        linear_sparse_logit = torch.sum(torch.cat(sparse_embedding_list, dim=-1), dim=-1, keepdim=False)
        linear_dense_logit = torch.cat(dense_value_list, dim=-1).matmul(self.weight)
        return linear_sparse_logit + linear_dense_logit


class BaseModel(nn.Module):
    def __init__(self, linear_feature_columns, dnn_feature_columns, dnn_hidden_units=(128, 128),
                 l2_reg_linear=1e-5, l2_reg_embedding=1e-5, l2_reg_dnn=0, init_std=0.0001, seed=1024,
                 dnn_dropout=0, dnn_activation='relu', task='binary', device='cpu'):
        super(BaseModel, self).__init__()
        torch.manual_seed(seed)
        self.dnn_feature_columns = dnn_feature_columns
        self.reg_loss = torch.zeros((1,), device=device)
        self.aux_loss = torch.zeros((1,), device=device)
        self.device = device
        self.feature_index = build_input_features(linear_feature_columns + dnn_feature_columns)
        self.embedding_dict = create_embedding_matrix(dnn_feature_columns, init_std, sparse=False, device=device)
        self.linear_model = Linear(linear_feature_columns, self.feature_index, device=device)

        self.add_regularization_loss(self.embedding_dict.parameters(), l2_reg_embedding)
        self.add_regularization_loss(self.linear_model.parameters(), l2_reg_linear)

        self.out = PredictionLayer(task, )
        self.to(device)

    def fit(self, x=None, y=None, batch_size=None, epochs=1, verbose=1, initial_epoch=0, shuffle=True):
        if isinstance(x, dict):
            x = [x[feature] for feature in self.feature_index]
        for i in range(len(x)):
            if len(x[i].shape) == 1:
                x[i] = np.expand_dims(x[i], axis=1)
        train_tensor_data = Data.TensorDataset(torch.from_numpy(np.concatenate(x, axis=-1)), torch.from_numpy(y))
        if batch_size is None:
            batch_size = 256
        train_loader = DataLoader(dataset=train_tensor_data, shuffle=shuffle, batch_size=batch_size)

        model = self.train()
        loss_func = self.loss_func
        optim = self.optim
        sample_num = len(train_tensor_data)
        for epoch in range(initial_epoch, epochs):
            start_time = time.time()
            loss_epoch = 0
            total_loss_epoch = 0
            for index, (x_train, y_train) in enumerate(train_loader):
                x = x_train.to(self.device).float()
                y = y_train.to(self.device).float()

                y_pred = model(x).squeeze()

                optim.zero_grad()
                loss = loss_func(y_pred, y.squeeze(), reduction='sum')

                total_loss = loss + self.reg_loss + self.aux_loss

                loss_epoch += loss.item()
                total_loss_epoch += total_loss.item()
                total_loss.backward(retain_graph=True)  # expect: GG103
                optim.step()
            if verbose > 0:
                print('Epoch {0}/{1}'.format(epoch + 1, epochs), "{0}s - loss: {1: .4f}".format(
                    int(time.time() - start_time), total_loss_epoch / sample_num))

    def input_from_feature_columns(self, X, feature_columns, embedding_dict):
        sparse_feature_columns = [x for x in feature_columns if isinstance(x, SparseFeat)]
        dense_feature_columns = [x for x in feature_columns if isinstance(x, DenseFeat)]
        sparse_embedding_list = [embedding_dict[feat.embedding_name](
            X[:, self.feature_index[feat.name][0]:self.feature_index[feat.name][1]].long()) for
            feat in sparse_feature_columns]
        dense_value_list = [X[:, self.feature_index[feat.name][0]:self.feature_index[feat.name][1]] for feat in
                            dense_feature_columns]
        return sparse_embedding_list, dense_value_list

    def compute_input_dim(self, feature_columns):
        sparse_input_dim = sum(feat.embedding_dim for feat in feature_columns if isinstance(feat, SparseFeat))
        dense_input_dim = sum(feat.dimension for feat in feature_columns if isinstance(feat, DenseFeat))
        return sparse_input_dim + dense_input_dim

    def add_regularization_loss(self, weight_list, weight_decay, p=2):
        reg_loss = torch.zeros((1,), device=self.device)
        for w in weight_list:
            if isinstance(w, tuple):
                l2_reg = torch.norm(w[1], p=p, )
            else:
                l2_reg = torch.norm(w, p=p, )
            reg_loss = reg_loss + l2_reg
        reg_loss = weight_decay * reg_loss
        self.reg_loss = self.reg_loss + reg_loss

    def compile(self, optimizer, loss=None, metrics=None):
        self.optim = torch.optim.Adam(self.parameters()) if optimizer == "adam" else optimizer
        self.loss_func = F.binary_cross_entropy if loss == "binary_crossentropy" else loss
        self.metrics = metrics


# ---- deepctr_torch.models.deepfm ----
class DeepFM(BaseModel):
    def __init__(self, linear_feature_columns, dnn_feature_columns, use_fm=True, dnn_hidden_units=(256, 128),
                 l2_reg_linear=0.00001, l2_reg_embedding=0.00001, l2_reg_dnn=0, init_std=0.0001, seed=1024,
                 dnn_dropout=0, dnn_activation='relu', dnn_use_bn=False, task='binary', device='cpu'):
        super(DeepFM, self).__init__(linear_feature_columns, dnn_feature_columns, dnn_hidden_units=dnn_hidden_units,
                                     l2_reg_linear=l2_reg_linear, l2_reg_embedding=l2_reg_embedding,
                                     l2_reg_dnn=l2_reg_dnn, init_std=init_std, seed=seed, dnn_dropout=dnn_dropout,
                                     dnn_activation=dnn_activation, task=task, device=device)
        self.use_fm = use_fm
        self.use_dnn = len(dnn_feature_columns) > 0 and len(dnn_hidden_units) > 0
        if use_fm:
            self.fm = FM()
        if self.use_dnn:
            self.dnn = DNN(self.compute_input_dim(dnn_feature_columns), dnn_hidden_units, activation=dnn_activation,
                           l2_reg=l2_reg_dnn, dropout_rate=dnn_dropout, use_bn=dnn_use_bn, init_std=init_std,
                           device=device)
            self.dnn_linear = nn.Linear(dnn_hidden_units[-1], 1, bias=False).to(device)
            self.add_regularization_loss(
                filter(lambda x: 'weight' in x[0] and 'bn' not in x[0], self.dnn.named_parameters()), l2_reg_dnn)
            self.add_regularization_loss([self.dnn_linear.weight], l2_reg_dnn)
        self.to(device)

    def forward(self, X):
        sparse_embedding_list, dense_value_list = self.input_from_feature_columns(X, self.dnn_feature_columns,
                                                                                  self.embedding_dict)
        logit = self.linear_model(X)
        if self.use_fm and len(sparse_embedding_list) > 0:
            fm_input = torch.cat(sparse_embedding_list, dim=1)
            logit += self.fm(fm_input)
        if self.use_dnn:
            dnn_input = combined_dnn_input(sparse_embedding_list, dense_value_list)
            dnn_output = self.dnn(dnn_input)
            dnn_logit = self.dnn_linear(dnn_output)
            logit += dnn_logit
        y_pred = self.out(logit)
        return y_pred


# ---- examples/run_classification_criteo.py, on random criteo-like data ----
rng = np.random.default_rng(0)
n_samples = 64
sparse_features = ['C' + str(i) for i in range(1, 6)]
dense_features = ['I' + str(i) for i in range(1, 4)]
vocab = {feat: int(rng.integers(5, 20)) for feat in sparse_features}
data = {feat: rng.integers(0, vocab[feat], n_samples) for feat in sparse_features}
data.update({feat: rng.random(n_samples).astype(np.float32) for feat in dense_features})
target = rng.integers(0, 2, n_samples).astype(np.float32)

fixlen_feature_columns = [SparseFeat(feat, vocab[feat], embedding_dim=4) for feat in sparse_features] + \
                         [DenseFeat(feat, 1, ) for feat in dense_features]
dnn_feature_columns = fixlen_feature_columns
linear_feature_columns = fixlen_feature_columns

train_model_input = {name: data[name] for name in sparse_features + dense_features}

device = 'cpu'
model = DeepFM(linear_feature_columns=linear_feature_columns, dnn_feature_columns=dnn_feature_columns,
               dnn_hidden_units=(16, 8), task='binary', l2_reg_embedding=1e-5, device=device)
model.compile("adam", "binary_crossentropy", metrics=["binary_crossentropy", "auc"], )
model.fit(train_model_input, target, batch_size=16, epochs=2, verbose=2)
