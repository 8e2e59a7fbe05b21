# Source: https://github.com/davidmascharka/tbd-nets/issues/8
"""Fixed twin of q_tbd_nets_check_accuracy_disables_grad_bug.py. tbd-nets `train-model.ipynb`:
`check_accuracy` turns autograd off process-wide with `torch.set_grad_enabled(False)` and
`train_epoch` calls it at the end of each epoch, so the next epoch's `loss.backward()` raised
"element 0 of tensors does not require grad and does not have a grad_fn". Fix (the author's commit
"Fix training bug", applied here): `train_epoch` begins with `torch.set_grad_enabled(True)`. TbDNet
and the CLEVR loaders are small stand-ins; `loss.data[0]` (torch 0.4) is written `loss.item()`.
"""
import io

import torch
import torch.nn as nn
import torch.nn.functional as F

device = 'cuda' if torch.cuda.is_available() else 'cpu'

# ----------------------------- tbd/module_net.py (stand-in) -----------------------------


class AttentionModule(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.conv1 = nn.Conv2d(dim, dim, 3, padding=1)
        self.conv2 = nn.Conv2d(dim, 1, 1)

    def forward(self, feats, attn):
        out = F.relu(self.conv1(feats * attn))
        return torch.sigmoid(self.conv2(out))


class TbDNet(nn.Module):
    def __init__(self, vocab, feature_dim=(16, 4, 4), module_dim=8, n_answers=28):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(feature_dim[0], module_dim, 3, padding=1), nn.ReLU())
        self.function_modules = nn.ModuleList([AttentionModule(module_dim) for _ in vocab['program_token_to_idx']])
        self.classifier = nn.Sequential(nn.Flatten(), nn.Linear(module_dim * feature_dim[1] * feature_dim[2], n_answers))
        self.attention_sum = 0

    def forward(self, feats, programs):
        batch_size = feats.size(0)
        feat_input_volume = self.stem(feats)
        final_module_outputs = []
        self.attention_sum = 0
        for n in range(batch_size):
            feat_input = feat_input_volume[n:n+1]
            output = torch.ones_like(feat_input[:, :1])
            for i in reversed(programs.data[n].cpu().numpy()):
                output = self.function_modules[int(i)](feat_input, output)
                self.attention_sum += output.sum()
            final_module_outputs.append(feat_input * output)
        return self.classifier(torch.cat(final_module_outputs, 0))

# ----------------------------- utils/clevr.py (stand-in) -----------------------------


def load_vocab(path):
    return {'program_token_to_idx': {'scene': 0, 'filter_red': 1, 'filter_cube': 2, 'relate_left': 3}}


def ClevrDataLoaderNumpy(n_batches=2, batch_size=4, **kwargs):
    # batches of (questions, image_idxs, features, answers, programs)
    return [(None, None, torch.randn(batch_size, 16, 4, 4), torch.randint(4, 32, (batch_size,)),
             torch.randint(0, 4, (batch_size, 3))) for _ in range(n_batches)]

# ----------------------------- train-model.ipynb -----------------------------


torch.manual_seed(0)
vocab = load_vocab('data/vocab.json')
tbd_net = TbDNet(vocab).to(device)

train_loader = ClevrDataLoaderNumpy(batch_size=4, shuffle=True)
val_loader = ClevrDataLoaderNumpy(batch_size=4, shuffle=False)


def map_ans(answers):
    ''' Map the answers from the format Justin Johnson et al. use to our own format. '''
    ans_tensor = torch.LongTensor(answers.size())
    table = {15: 0, 16: 1, 18: 2, 20: 3, 21: 4, 25: 5, 26: 6, 30: 7, 17: 8, 19: 9, 29: 10, 22: 11, 28: 12,
             23: 13, 27: 14, 24: 15, 31: 16, 4: 17, 5: 18, 6: 19, 7: 20, 8: 21, 9: 22, 10: 23, 11: 24,
             12: 25, 13: 26, 14: 27}
    for theirs, ours in table.items():
        ans_tensor[answers == theirs] = ours
    return ans_tensor


def check_accuracy(loader):
    '''
    Convenience function for checking the accuracy of the model
    over all the data in a given `DataLoader`
    '''
    torch.set_grad_enabled(False)
    num_correct, num_samples = 0, 0
    for batch in loader:
        _, _, feats, answers, programs = batch
        feats = feats.to(device)
        programs = programs.to(device)

        outs = tbd_net(feats, programs)
        _, preds = outs.max(1)
        mapped_ans = map_ans(answers)
        num_correct += (preds.to('cpu') == mapped_ans).sum()
        num_samples += preds.size(0)

    return (num_correct, num_samples)


def write_acc(f, string, correct, total):
    ''' Convenience function to write the accuracy to a file '''
    percent = correct / total * 100 if total != 0 else 100
    f.write(string.format(correct, total, percent))


optimizer = torch.optim.Adam(tbd_net.parameters(), 1e-04)
xent_loss = torch.nn.CrossEntropyLoss().to(device)


def train_epoch():
    ''' Convenience function to train the model for one epoch. '''
    torch.set_grad_enabled(True)
    num_correct, num_samples = 0, 0

    for batch in train_loader:
        _, _, feats, answers, programs = batch
        feats = feats.to(device)
        programs = programs.to(device)

        optimizer.zero_grad()
        outs = tbd_net(feats, programs)
        _, preds = outs.max(1)
        mapped_ans = map_ans(answers)
        num_correct += (preds.to('cpu') == mapped_ans).sum()
        num_samples += preds.size(0)
        loss = xent_loss(outs, mapped_ans.to(device))

        # L1 penalty on the intermediate attention masks
        loss += tbd_net.attention_sum * 2.5e-07

        loss_file.write('Loss: {}\n'.format(loss.item()))
        loss.backward()
        optimizer.step()

    val_correct, val_samples = check_accuracy(val_loader)

    write_acc(acc_file, 'Train Accuracy: {} / {} ({:.2f}%)\n', num_correct, num_samples)
    write_acc(acc_file, 'Val Accuracy: {} / {} ({:.2f}%)\n', val_correct, val_samples)
    acc_file.flush()


loss_file = io.StringIO()
acc_file = io.StringIO()
epoch = 0
while epoch < 3:
    epoch += 1
    print('starting epoch', epoch)
    train_epoch()
