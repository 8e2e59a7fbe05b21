# Source: https://github.com/KaiyangZhou/deep-person-reid/issues/373
"""Fixed twin (the maintainers' rule: a triplet-only loss needs `fixbase_epoch: 0`, all layers trained from
the start). deep-person-reid (torchreid), a config switched to `loss: triplet` with `weight_x: 0` while keeping the
default fixbase warm-up (`fixbase_epoch`, `open_layers: ['classifier']`): for the first epochs
`Engine.train` calls `open_specified_layers`, which sets `requires_grad = False` on every child but the
classifier, and `ImageTripletEngine.forward_backward` builds its loss only from the triplet term on the
features, which never pass through the classifier. So `loss.backward()` raises "element 0 of tensors does
not require grad and does not have a grad_fn" at "Only train ['classifier'] (epoch: 1/10)". Fix (what the
maintainers enforced afterwards in `check_cfg`: a triplet-only loss does not include the classifier's
output, so `fixbase_epoch` must be 0): train all layers from the start. The OSNet backbone, the
RandomIdentitySampler and the Market-1501 loader are small stand-ins; random images, CPU.
"""
import torch
import torch.nn as nn


# ---- torchreid/losses/hard_mine_triplet_loss.py ----
class TripletLoss(nn.Module):
    def __init__(self, margin=0.3):
        super(TripletLoss, self).__init__()
        self.margin = margin
        self.ranking_loss = nn.MarginRankingLoss(margin=margin)

    def forward(self, inputs, targets):
        n = inputs.size(0)
        # Compute pairwise distance, replace by the official when merged
        dist = torch.pow(inputs, 2).sum(dim=1, keepdim=True).expand(n, n)
        dist = dist + dist.t()
        dist = torch.addmm(dist, inputs, inputs.t(), beta=1, alpha=-2)
        dist = dist.clamp(min=1e-12).sqrt()  # for numerical stability
        # For each anchor, find the hardest positive and negative
        mask = targets.expand(n, n).eq(targets.expand(n, n).t())
        dist_ap, dist_an = [], []
        for i in range(n):
            dist_ap.append(dist[i][mask[i]].max().unsqueeze(0))
            dist_an.append(dist[i][mask[i] == 0].min().unsqueeze(0))
        dist_ap = torch.cat(dist_ap)
        dist_an = torch.cat(dist_an)
        y = torch.ones_like(dist_an)
        return self.ranking_loss(dist_an, dist_ap, y)


# ---- torchreid/utils/torchtools.py ----
def open_all_layers(model):
    model.train()
    for p in model.parameters():
        p.requires_grad = True


def open_specified_layers(model, open_layers):
    if isinstance(open_layers, str):
        open_layers = [open_layers]
    for layer in open_layers:
        assert hasattr(model, layer), '"{}" is not an attribute of the model'.format(layer)
    for name, module in model.named_children():
        if name in open_layers:
            module.train()
            for p in module.parameters():
                p.requires_grad = True
        else:
            module.eval()
            for p in module.parameters():
                p.requires_grad = False


# ---- torchreid/models (OSNet stand-in) ----
class TinyReIDNet(nn.Module):
    def __init__(self, num_classes, loss='triplet', feature_dim=16):
        super().__init__()
        self.loss = loss
        self.conv1 = nn.Sequential(nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.BatchNorm2d(8), nn.ReLU())
        self.conv2 = nn.Sequential(nn.Conv2d(8, 16, 3, stride=2, padding=1), nn.BatchNorm2d(16), nn.ReLU())
        self.global_avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Sequential(nn.Linear(16, feature_dim), nn.BatchNorm1d(feature_dim), nn.ReLU())
        self.classifier = nn.Linear(feature_dim, num_classes)

    def forward(self, x):
        x = self.conv2(self.conv1(x))
        v = self.global_avgpool(x).view(x.size(0), -1)
        v = self.fc(v)
        if not self.training:
            return v
        y = self.classifier(v)
        if self.loss == 'softmax':
            return y
        elif self.loss == 'triplet':
            return y, v
        raise KeyError("Unsupported loss: {}".format(self.loss))


# ---- torchreid/engine ----
class Engine(object):
    def __init__(self, datamanager, model, optimizer=None):
        self.datamanager = datamanager
        self.train_loader = datamanager.train_loader
        self.model = model
        self.optimizer = optimizer
        self.epoch = 0

    def run(self, max_epoch=0, fixbase_epoch=0, open_layers=None):
        for self.epoch in range(0, max_epoch):
            self.train(fixbase_epoch=fixbase_epoch, open_layers=open_layers)

    def train(self, print_freq=10, fixbase_epoch=0, open_layers=None):
        self.model.train()
        if (self.epoch + 1) <= fixbase_epoch and open_layers is not None:
            print('* Only train {} (epoch: {}/{})'.format(open_layers, self.epoch + 1, fixbase_epoch))
            open_specified_layers(self.model, open_layers)
        else:
            open_all_layers(self.model)
        for self.batch_idx, data in enumerate(self.train_loader):
            loss_summary = self.forward_backward(data)
            print('epoch: [{}] batch {} {}'.format(self.epoch + 1, self.batch_idx, loss_summary))

    def compute_loss(self, criterion, outputs, targets):
        if isinstance(outputs, (tuple, list)):
            loss = sum(criterion(x, targets) for x in outputs) / len(outputs)
        else:
            loss = criterion(outputs, targets)
        return loss


class ImageTripletEngine(Engine):
    def __init__(self, datamanager, model, optimizer, margin=0.3, weight_t=1, weight_x=1,
                 label_smooth=True):
        super(ImageTripletEngine, self).__init__(datamanager, model, optimizer)
        assert weight_t >= 0 and weight_x >= 0
        assert weight_t + weight_x > 0
        self.weight_t = weight_t
        self.weight_x = weight_x
        self.criterion_t = TripletLoss(margin=margin)
        self.criterion_x = nn.CrossEntropyLoss(label_smoothing=0.1 if label_smooth else 0.0)

    def forward_backward(self, data):
        imgs, pids = data
        outputs, features = self.model(imgs)

        loss = 0
        loss_summary = {}
        if self.weight_t > 0:
            loss_t = self.compute_loss(self.criterion_t, features, pids)
            loss += self.weight_t * loss_t
            loss_summary['loss_t'] = loss_t.item()
        if self.weight_x > 0:
            loss_x = self.compute_loss(self.criterion_x, outputs, pids)
            loss += self.weight_x * loss_x
            loss_summary['loss_x'] = loss_x.item()

        self.optimizer.zero_grad()
        loss.backward()
        self.optimizer.step()
        return loss_summary


class ImageDataManagerStandIn:
    """Market-1501 with RandomIdentitySampler stand-in: 4 identities x 2 instances per batch."""
    def __init__(self, num_batches=2):
        self.num_train_pids = 6
        self.train_loader = [(torch.rand(8, 3, 32, 16), torch.tensor([0, 0, 1, 1, 2, 2, 3, 3]) + (b % 2) * 2)
                             for b in range(num_batches)]


# ---- scripts/main.py with the reporter's config ----
cfg = {
    'loss': {'name': 'triplet', 'triplet': {'margin': 0.3, 'weight_t': 1.0, 'weight_x': 0.0}},
    'train': {'lr': 0.0003, 'max_epoch': 2, 'fixbase_epoch': 0, 'open_layers': ['classifier']},
}
torch.manual_seed(0)
datamanager = ImageDataManagerStandIn()
model = TinyReIDNet(num_classes=datamanager.num_train_pids, loss=cfg['loss']['name'])
optimizer = torch.optim.Adam(model.parameters(), lr=cfg['train']['lr'])
engine = ImageTripletEngine(datamanager, model, optimizer, margin=cfg['loss']['triplet']['margin'],
                            weight_t=cfg['loss']['triplet']['weight_t'], weight_x=cfg['loss']['triplet']['weight_x'])
engine.run(max_epoch=cfg['train']['max_epoch'], fixbase_epoch=cfg['train']['fixbase_epoch'],
           open_layers=cfg['train']['open_layers'])
