# Source: https://github.com/lxztju/pytorch_classification/issues/32
"""lxztju/pytorch_classification's train.py with the right fix (the thread's
loss.requires_grad_(True) only hides the error): the freezing loop skips the last child, the
classifier that build_model replaced, so the loss depends on trainable parameters and the SGD
step trains the head."""
import torch
import torch.nn as nn
import torch.optim as optim


class MobileNetV2Small(nn.Module):
    def __init__(self, num_classes=1000):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU6(inplace=True),
            nn.Conv2d(8, 8, 3, padding=1, groups=8, bias=False), nn.BatchNorm2d(8), nn.ReLU6(inplace=True),
            nn.Conv2d(8, 16, 1, bias=False), nn.BatchNorm2d(16),
        )
        self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(16, num_classes))

    def forward(self, x):
        x = self.features(x)
        x = nn.functional.adaptive_avg_pool2d(x, 1).reshape(x.shape[0], -1)
        return self.classifier(x)


def Mobilenetv2(num_classes, test=False):
    model = MobileNetV2Small()
    fc_features = model.classifier[1].in_features
    model.classifier = nn.Linear(fc_features, num_classes)
    return model


class cfg:
    model_name = 'moblienetv2'
    MODEL_NAMES = {'moblienetv2': Mobilenetv2}
    NUM_CLASSES = 5
    LR = 1e-3
    MOMENTUM = 0.9
    WEIGHT_DECAY = 5e-4
    BATCH_SIZE = 4
    MAX_EPOCH = 1
    RESUME_EPOCH = 0
    GPUS = 1


train_datasets = [(torch.randn(3, 16, 16), i % cfg.NUM_CLASSES) for i in range(8)]


def train_dataloader_iter():
    for k in range(0, len(train_datasets), cfg.BATCH_SIZE):
        chunk = train_datasets[k:k + cfg.BATCH_SIZE]
        yield torch.stack([c[0] for c in chunk]), torch.tensor([c[1] for c in chunk])


print('****** Training {} ****** '.format(cfg.model_name))
model = cfg.MODEL_NAMES[cfg.model_name](num_classes=cfg.NUM_CLASSES)
children = list(model.children())
ct = 0
for child in children[:-1]:
    ct += 1
    if ct < 8:
        for param in child.parameters():
            param.requires_grad = False

optimizer = optim.SGD(model.parameters(), lr=cfg.LR, momentum=cfg.MOMENTUM, weight_decay=cfg.WEIGHT_DECAY)
criterion = nn.CrossEntropyLoss()

batch_size = cfg.BATCH_SIZE
epoch_size = len(train_datasets) // batch_size
max_iter = cfg.MAX_EPOCH * epoch_size
start_iter = cfg.RESUME_EPOCH * epoch_size
epoch = cfg.RESUME_EPOCH

model.train()
for iteration in range(start_iter, max_iter):
    if iteration % epoch_size == 0:
        batch_iterator = train_dataloader_iter()
        loss = 0
        epoch += 1

    images, labels = next(batch_iterator)

    out = model(images)
    loss = criterion(out, labels)

    optimizer.zero_grad()
    loss.backward()
    optimizer.step()

    prediction = torch.max(out, 1)[1]
    train_correct = (prediction == labels).sum()
    train_acc = (train_correct.float()) / batch_size
    print('Epoch:' + repr(epoch) + ' || Loss: %.6f||' % (loss.item()) + 'ACC: %.3f ||' % (train_acc * 100))
