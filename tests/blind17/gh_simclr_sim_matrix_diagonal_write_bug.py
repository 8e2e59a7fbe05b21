# Source: https://github.com/leftthomas/SimCLR/commit/fac6ed0
"""leftthomas/SimCLR, train.py before the commit "fix inplace bug": the NT-Xent loss computes
`sim_matrix = torch.exp(torch.mm(out, out.t().contiguous()) / temperature)` and then zeroes its
diagonal in place, `sim_matrix[torch.eye(2 * batch_size).bool()] = 0.0`. `exp` saved its result for
the backward, so `loss.backward()` raises "one of the variables needed for gradient computation has
been modified by an inplace operation". The commit's fix: select the off-diagonal entries out of
place (`masked_select` of the complement mask, reshaped to [2B, 2B-1]). torchvision's resnet18,
thop, tqdm and the CIFAR-10 pair loader are small stand-ins; tiny images, CPU.
"""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim


# ---- stand-ins: torchvision.models.resnet.resnet18 (its children in order), tqdm ----
class resnet18(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(16)
        self.relu = nn.ReLU(inplace=True)
        self.maxpool = nn.MaxPool2d(2)
        self.layer1 = nn.Sequential(nn.Conv2d(16, 32, 3, 1, 1), nn.BatchNorm2d(32), nn.ReLU(inplace=True))
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(32, 1000)


class tqdm:
    def __init__(self, iterable, desc=None):
        self.iterable = iterable

    def __iter__(self):
        return iter(self.iterable)

    def set_description(self, text):
        print(text)


# ---- model.py ----
class Model(nn.Module):
    def __init__(self, feature_dim=128):
        super(Model, self).__init__()
        self.f = []
        for module in resnet18().children():
            if not isinstance(module, nn.Linear):
                self.f.append(module)
        self.f = nn.Sequential(*self.f)
        self.g = nn.Sequential(nn.Linear(32, feature_dim, bias=False), nn.ReLU(inplace=True),
                               nn.Linear(feature_dim, feature_dim, bias=False))

    def forward(self, x):
        x = self.f(x)
        feature = torch.flatten(x, start_dim=1)
        out = self.g(feature)
        return F.normalize(feature, dim=-1), F.normalize(out, dim=-1)


# ---- train.py ----
def train(net, data_loader, train_optimizer):
    net.train()
    total_loss, total_num, train_bar = 0.0, 0, tqdm(data_loader)
    for pos_1, pos_2, target in train_bar:
        feature_1, out_1 = net(pos_1)
        feature_2, out_2 = net(pos_2)
        # [2*B, D]
        out = torch.cat([out_1, out_2], dim=0)
        # [2*B, 2*B]
        sim_matrix = torch.exp(torch.mm(out, out.t().contiguous()) / temperature)
        sim_matrix[torch.eye(2 * batch_size, device=sim_matrix.device).bool()] = 0.0
        # compute loss
        pos_sim = torch.sum(out_1 * out_2, dim=-1)
        pos_sim = torch.cat([pos_sim, pos_sim], dim=0)
        loss = (- torch.log(pos_sim / sim_matrix.sum(dim=-1))).mean()
        train_optimizer.zero_grad()
        loss.backward()  # expect: GG103
        train_optimizer.step()
        total_num += batch_size
        total_loss += loss.item() * batch_size
        train_bar.set_description('Train Epoch: [{}/{}] Loss: {:.4f}'.format(epoch, epochs, total_loss / total_num))
    return total_loss / total_num


if __name__ == '__main__':
    feature_dim, temperature, batch_size, epochs = 16, 0.5, 4, 1
    torch.manual_seed(0)
    train_loader = [(torch.randn(batch_size, 3, 8, 8), torch.randn(batch_size, 3, 8, 8), torch.randint(0, 10, (batch_size,)))
                    for _ in range(2)]
    model = Model(feature_dim)
    optimizer = optim.Adam(model.parameters(), lr=1e-3, weight_decay=1e-6)
    for epoch in range(1, epochs + 1):
        train_loss = train(model, train_loader, optimizer)
