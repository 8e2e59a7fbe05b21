# Source: https://github.com/dasguptar/treelstm.pytorch/pull/26
"""SimilarityTreeLSTM with the GloVe matrix loaded through `.data`, the fix the author names ("I
hurriedly removed all `.data`, and this was a mistake"): `self.emb.weight.data.copy_(init_emb)`
writes the values without recording an operation on the leaf parameter."""
import torch
import torch.nn as nn
import torch.nn.functional as F

PAD = 0


class Tree(object):
    def __init__(self, idx):
        self.idx = idx
        self.children = []
        self.num_children = 0

    def add_child(self, child):
        self.children.append(child)
        self.num_children += 1


class ChildSumTreeLSTM(nn.Module):
    def __init__(self, in_dim, mem_dim):
        super(ChildSumTreeLSTM, self).__init__()
        self.in_dim = in_dim
        self.mem_dim = mem_dim
        self.ioux = nn.Linear(self.in_dim, 3 * self.mem_dim)
        self.iouh = nn.Linear(self.mem_dim, 3 * self.mem_dim)
        self.fx = nn.Linear(self.in_dim, self.mem_dim)
        self.fh = nn.Linear(self.mem_dim, self.mem_dim)

    def node_forward(self, inputs, child_c, child_h):
        child_h_sum = torch.sum(child_h, dim=0, keepdim=True)

        iou = self.ioux(inputs) + self.iouh(child_h_sum)
        i, o, u = torch.split(iou, iou.size(1) // 3, dim=1)
        i, o, u = torch.sigmoid(i), torch.sigmoid(o), torch.tanh(u)

        f = torch.sigmoid(
            self.fh(child_h) +
            self.fx(inputs).repeat(len(child_h), 1)
        )
        fc = torch.mul(f, child_c)

        c = torch.mul(i, u) + torch.sum(fc, dim=0, keepdim=True)
        h = torch.mul(o, torch.tanh(c))
        return c, h

    def forward(self, tree, inputs):
        for idx in range(tree.num_children):
            self.forward(tree.children[idx], inputs)

        if tree.num_children == 0:
            child_c = inputs[0].detach().new_zeros(1, self.mem_dim)
            child_h = inputs[0].detach().new_zeros(1, self.mem_dim)
        else:
            child_c, child_h = zip(*map(lambda x: x.state, tree.children))
            child_c, child_h = torch.cat(child_c, dim=0), torch.cat(child_h, dim=0)

        tree.state = self.node_forward(inputs[tree.idx].unsqueeze(0), child_c, child_h)
        return tree.state


class Similarity(nn.Module):
    def __init__(self, mem_dim, hidden_dim, num_classes):
        super(Similarity, self).__init__()
        self.wh = nn.Linear(2 * mem_dim, hidden_dim)
        self.wp = nn.Linear(hidden_dim, num_classes)

    def forward(self, lvec, rvec):
        mult_dist = torch.mul(lvec, rvec)
        abs_dist = torch.abs(torch.add(lvec, -rvec))
        vec_dist = torch.cat((mult_dist, abs_dist), 1)

        out = torch.sigmoid(self.wh(vec_dist))
        out = F.log_softmax(self.wp(out), dim=1)
        return out


class SimilarityTreeLSTM(nn.Module):
    def __init__(self, vocab_size, in_dim, mem_dim, hidden_dim, num_classes, sparsity, freeze, init_emb):
        super(SimilarityTreeLSTM, self).__init__()
        self.emb = nn.Embedding(vocab_size, in_dim, padding_idx=PAD, sparse=sparsity)
        if freeze:
            self.emb.weight.requires_grad = False
        self.emb.weight.data.copy_(init_emb)
        self.childsumtreelstm = ChildSumTreeLSTM(in_dim, mem_dim)
        self.similarity = Similarity(mem_dim, hidden_dim, num_classes)

    def forward(self, ltree, linputs, rtree, rinputs):
        linputs = self.emb(linputs)
        rinputs = self.emb(rinputs)
        lstate, lhidden = self.childsumtreelstm(ltree, linputs)
        rstate, rhidden = self.childsumtreelstm(rtree, rinputs)
        output = self.similarity(lstate, rstate)
        return output


def make_tree():
    root = Tree(0)
    for idx in (1, 2):
        root.add_child(Tree(idx))
    return root


vocab_size, in_dim, mem_dim, hidden_dim, num_classes = 12, 6, 8, 5, 5
emb = torch.randn(vocab_size, in_dim)
emb[PAD].zero_()
model = SimilarityTreeLSTM(vocab_size, in_dim, mem_dim, hidden_dim, num_classes,
                           sparsity=False, freeze=False, init_emb=emb)
optimizer = torch.optim.Adagrad(model.parameters(), lr=0.01)
criterion = nn.KLDivLoss(reduction='batchmean')
for epoch in range(2):
    for _ in range(3):
        linput, rinput = torch.randint(1, vocab_size, (3,)), torch.randint(1, vocab_size, (3,))
        target = torch.softmax(torch.randn(1, num_classes), dim=1)
        optimizer.zero_grad()
        output = model(make_tree(), linput, make_tree(), rinput)
        loss = criterion(output, target)
        loss.backward()
        optimizer.step()
    print(epoch, loss.item())
