# Source: https://github.com/nkdinsdale/Unlearning_for_MRI_harmonisation/issues/3
"""Unlearning_for_MRI_harmonisation, train_unlearn_threedatasets (train_utils.py): the reporter's
age-prediction run crashes in `loss_conf.backward(retain_graph=False)`; with current PyTorch that
backward raises "one of the variables needed for gradient computation has been modified by an
inplace operation".

Per batch the loop (1) computes features = encoder(data), backpropagates the regression loss with
retain_graph=True and calls optimizer.step(), which updates the encoder's weights in place;
(2) trains the domain predictor on features.detach(); (3) computes the confusion loss on
domain_predictor(features) with the SAME features and calls loss_conf.backward(). That backward
goes back through the encoder's graph, which saved the weights step (1) has since changed. The
thread has no fix; the right one is to run the encoder again (features = encoder(data)) before the
confusion step, so the graph holds the updated weights, and to drop the retain_graph=True nothing
needs any more (the running totals then use .item()).
The 3-D VGG encoder keeps its 6 conv blocks with far fewer channels on 32^3 volumes; the three
site loaders are random stand-ins.
"""
import argparse
import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim
from torch.autograd import Variable

torch.manual_seed(0)
np.random.seed(0)


class Encoder(nn.Module):
    def __init__(self):
        super(Encoder, self).__init__()
        self.feature = nn.Sequential()
        chans = [1, 4, 4, 8, 8, 8, 8]
        for b in range(1, 7):
            cin, cout = chans[b - 1], chans[b]
            self.feature.add_module('f_conv%d_1' % b, nn.Conv3d(cin, cout, kernel_size=3, padding=1))
            self.feature.add_module('f_relu_%d_1' % b, nn.ReLU(True))
            self.feature.add_module('f_bn%d_1' % b, nn.BatchNorm3d(cout))
            self.feature.add_module('f_conv%d_2' % b, nn.Conv3d(cout, cout, kernel_size=3, padding=1))
            self.feature.add_module('f_relu_%d_2' % b, nn.ReLU(True))
            self.feature.add_module('f_bn%d_2' % b, nn.BatchNorm3d(cout))
            self.feature.add_module('f_pool%d' % b if b < 6 else 'f_features', nn.MaxPool3d(2) if b < 6 else nn.AdaptiveMaxPool3d(1))

        self.embeddings = nn.Sequential()
        self.embeddings.add_module('r_fc1', nn.Linear(8, 16))
        self.embeddings.add_module('r_relu1', nn.ReLU(True))

    def forward(self, x):
        feature = self.feature(x)
        feature = feature.view(-1, 8)
        feature_embedding = self.embeddings(feature)
        return feature_embedding


class Regressor(nn.Module):
    def __init__(self):
        super(Regressor, self).__init__()
        self.regressor = nn.Sequential()
        self.regressor.add_module('r_fc2', nn.Linear(16, 8))
        self.regressor.add_module('r_relu2', nn.ReLU(True))
        self.regressor.add_module('r_pred', nn.Linear(8, 1))

    def forward(self, x):
        regression = self.regressor(x)
        return regression


class DomainPredictor(nn.Module):
    def __init__(self, nodes=2):
        super(DomainPredictor, self).__init__()
        self.nodes = nodes
        self.domain = nn.Sequential()
        self.domain.add_module('d_fc2', nn.Linear(16, 8))
        self.domain.add_module('d_relu2', nn.ReLU(True))
        self.domain.add_module('r_dropout', nn.Dropout(p=0.2))
        self.domain.add_module('d_fc3', nn.Linear(8, nodes))
        self.domain.add_module('d_pred', nn.Softmax(dim=1))

    def forward(self, x):
        domain_pred = self.domain(x)
        return domain_pred


class confusion_loss(nn.Module):
    def __init__(self, task=0):
        super(confusion_loss, self).__init__()
        self.task = task

    def forward(self, x, target):
        log = torch.log(x)
        log_sum = torch.sum(log, dim=1)
        normalised_log_sum = torch.div(log_sum, x.size()[1])
        loss = torch.mul(torch.sum(normalised_log_sum, dim=0), -1)
        return loss


def make_loader(site, batch_size, n_batches=2):
    """Stand-in for a site's DataLoader of (volume, age, one-hot site)."""
    batches = []
    for _ in range(n_batches):
        domain = torch.zeros(batch_size, 3)
        domain[:, site] = 1
        batches.append((torch.randn(batch_size, 1, 32, 32, 32), torch.rand(batch_size, 1) * 50 + 20, domain))
    return batches


def train_unlearn_threedatasets(args, models, train_loaders, optimizers, criterions, epoch):
    cuda = False

    [encoder, regressor, domain_predictor] = models
    [optimizer, optimizer_conf, optimizer_dm] = optimizers
    [b_train_dataloader, o_train_dataloader, w_train_dataloader] = train_loaders
    [criteron, conf_criterion, domain_criterion] = criterions

    regressor_loss = 0
    domain_loss = 0
    conf_loss = 0

    encoder.train()
    regressor.train()
    domain_predictor.train()

    true_domains = []
    pred_domains = []

    batches = 0
    for batch_idx, ((b_data, b_target, b_domain), (o_data, o_target, o_domain), (w_data, w_target, w_domain)) in enumerate(zip(b_train_dataloader, o_train_dataloader, w_train_dataloader)):
        max_batch = len(b_data)
        n1 = np.random.randint(1, max_batch - 2)
        n2 = np.random.randint(1, max_batch - n1 - 1)
        n3 = max_batch - n1 - n2

        b_data = b_data[:n1]
        b_target = b_target[:n1]
        b_domain = b_domain[:n1]

        o_data = o_data[:n2]
        o_target = o_target[:n2]
        o_domain = o_domain[:n2]

        w_data = w_data[:n3]
        w_target = w_target[:n3]
        w_domain = w_domain[:n3]

        data = torch.cat((b_data, o_data, w_data), 0)
        target = torch.cat((b_target, o_target, w_target), 0)
        domain_target = torch.cat((b_domain, o_domain, w_domain), 0)

        data, target, domain_target = Variable(data), Variable(target), Variable(domain_target)

        if list(data.size())[0] == args.batch_size:
            batches += 1

            # First update the encoder and regressor
            optimizer.zero_grad()
            features = encoder(data)
            output_pred = regressor(features)
            loss_1 = criteron(output_pred[:n1], target[:n1])
            loss_2 = criteron(output_pred[n1:n1 + n2], target[n1:n1 + n2])
            loss_3 = criteron(output_pred[n1 + n2:], target[n1 + n2:])
            loss = loss_1 + loss_2 + loss_3
            loss_total = loss
            loss_total.backward(retain_graph=True)
            optimizer.step()

            # Now update just the domain classifier
            optimizer_dm.zero_grad()
            output_dm = domain_predictor(features.detach())
            loss_dm = args.alpha * domain_criterion(output_dm, domain_target)
            loss_dm.backward()
            optimizer_dm.step()

            # Now update just the encoder using the domain loss
            optimizer_conf.zero_grad()
            output_dm_conf = domain_predictor(features)
            loss_conf = args.beta * conf_criterion(output_dm_conf, domain_target)
            loss_conf.backward(retain_graph=False)  # expect: GG103
            optimizer_conf.step()

            regressor_loss += loss
            domain_loss += loss_dm
            conf_loss += loss_conf

            output_dm_conf = np.argmax(output_dm_conf.detach().cpu().numpy(), axis=1)
            domain_target = np.argmax(domain_target.detach().cpu().numpy(), axis=1)
            true_domains.append(domain_target)
            pred_domains.append(output_dm_conf)

            if batch_idx % args.log_interval == 0:
                print('Train Epoch: {} [{}/{}]\tLoss: {:.6f}'.format(
                    epoch, (batch_idx + 1) * len(data), len(b_train_dataloader) * args.batch_size, loss.item()), flush=True)
                print('\t \t Confusion loss = ', loss_conf.item())
                print('\t \t Domain Loss = ', loss_dm.item(), flush=True)
            del target
            del loss
            del features

    av_loss = regressor_loss / batches
    av_conf = conf_loss / batches
    av_dom = domain_loss / batches

    true_domains = np.array(true_domains).reshape(-1)
    pred_domains = np.array(pred_domains).reshape(-1)
    acc = float(np.mean(true_domains == pred_domains))

    print('\nTraining set: Average loss: {:.4f}'.format(float(av_loss)))
    print('Training set: Average Conf loss: {:.4f}'.format(float(av_conf)))
    print('Training set: Average Dom loss: {:.4f}'.format(float(av_dom)))
    print('Training set: Average Acc: {:.4f}\n'.format(acc))
    return av_loss, acc, av_dom, av_conf


args = argparse.Namespace(batch_size=6, alpha=1.0, beta=10.0, log_interval=1, epochs=1, learning_rate=1e-4)

encoder = Encoder()
regressor = Regressor()
domain_predictor = DomainPredictor(nodes=3)

criteron = nn.MSELoss()
domain_criterion = nn.BCELoss()
conf_criterion = confusion_loss()

optimizer = optim.Adam(list(encoder.parameters()) + list(regressor.parameters()), lr=1e-4)
optimizer_conf = optim.Adam(list(encoder.parameters()), lr=1e-4)
optimizer_dm = optim.Adam(list(domain_predictor.parameters()), lr=1e-4)

models = [encoder, regressor, domain_predictor]
optimizers = [optimizer, optimizer_conf, optimizer_dm]
criterions = [criteron, conf_criterion, domain_criterion]
train_loaders = [make_loader(0, args.batch_size), make_loader(1, args.batch_size), make_loader(2, args.batch_size)]

for epoch in range(1, args.epochs + 1):
    loss, acc, dm_loss, conf_loss = train_unlearn_threedatasets(args, models, train_loaders, optimizers, criterions, epoch)
