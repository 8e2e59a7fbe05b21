# Source: https://github.com/hrzhang1123/DTFD-MIL/issues/8
"""DTFD-MIL (hrzhang1123, Main_DTFD_MIL.py) with torch 1.12: each slide's patch features are split
into pseudo-bags; the first tier (dimReduction, gated attention, classifier) is optimised on the
pseudo-bag predictions with loss0.backward(retain_graph=True) and optimizer0.step(), and only
then is the second-tier loss computed from the pseudo-bag features, whose graph goes back through
the first tier. loss1.backward() finds the first tier's weights changed by the step ("output 0 of
AsStridedBackward0, is at version 6; expected version 5"). The train loop and the modules are the
repository's (AFS distillation), with tiny feature sizes and random slides."""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class DimReduction(nn.Module):
    def __init__(self, n_channels, m_dim=16):
        super(DimReduction, self).__init__()
        self.fc1 = nn.Linear(n_channels, m_dim, bias=False)
        self.relu1 = nn.ReLU(inplace=True)

    def forward(self, x):
        return self.relu1(self.fc1(x))


class Attention_Gated(nn.Module):
    def __init__(self, L=16, D=8, K=1):
        super(Attention_Gated, self).__init__()
        self.attention_V = nn.Sequential(nn.Linear(L, D), nn.Tanh())
        self.attention_U = nn.Sequential(nn.Linear(L, D), nn.Sigmoid())
        self.attention_weights = nn.Linear(D, K)

    def forward(self, x, isNorm=True):
        A_V = self.attention_V(x)  # NxD
        A_U = self.attention_U(x)  # NxD
        A = self.attention_weights(A_V * A_U)  # NxK
        A = torch.transpose(A, 1, 0)  # KxN
        if isNorm:
            A = F.softmax(A, dim=1)  # softmax over N
        return A  ### K x N


class Classifier_1fc(nn.Module):
    def __init__(self, n_channels, n_classes, droprate=0.0):
        super(Classifier_1fc, self).__init__()
        self.fc = nn.Linear(n_channels, n_classes)
        self.dropout = nn.Dropout(p=droprate)

    def forward(self, x):
        return self.fc(self.dropout(x))


class Attention_with_Classifier(nn.Module):
    def __init__(self, L=16, D=8, K=1, num_cls=2, droprate=0):
        super(Attention_with_Classifier, self).__init__()
        self.attention = Attention_Gated(L, D, K)
        self.classifier = Classifier_1fc(L, num_cls, droprate)

    def forward(self, x):  ## x: N x L
        AA = self.attention(x)  ## K x N
        afeat = torch.mm(AA, x)  ## K x L
        return self.classifier(afeat)  ## K x num_cls


def train_attention_preFeature_DTFD(mDATA_list, classifier, dimReduction, attention, UClassifier,
                                    optimizer0, optimizer1, ce_cri, numGroup=3, grad_clipping=5):
    classifier.train()
    dimReduction.train()
    attention.train()
    UClassifier.train()
    for tfeat_tensor, tslideLabel in mDATA_list:
        slide_pseudo_feat = []
        slide_sub_preds = []
        slide_sub_labels = []

        feat_index = list(range(tfeat_tensor.shape[0]))
        index_chunk_list = np.array_split(np.array(feat_index), numGroup)
        index_chunk_list = [sst.tolist() for sst in index_chunk_list]

        for tindex in index_chunk_list:
            slide_sub_labels.append(tslideLabel)
            subFeat_tensor = torch.index_select(tfeat_tensor, dim=0, index=torch.LongTensor(tindex))
            tmidFeat = dimReduction(subFeat_tensor)
            tAA = attention(tmidFeat).squeeze(0)
            tattFeats = torch.einsum('ns,n->ns', tmidFeat, tAA)  ### n x fs
            tattFeat_tensor = torch.sum(tattFeats, dim=0).unsqueeze(0)  ## 1 x fs
            tPredict = classifier(tattFeat_tensor)  ### 1 x 2
            slide_sub_preds.append(tPredict)
            slide_pseudo_feat.append(tattFeat_tensor)  # AFS distillation

        slide_pseudo_feat = torch.cat(slide_pseudo_feat, dim=0)  ### numGroup x fs

        ## optimization for the first tier
        slide_sub_preds = torch.cat(slide_sub_preds, dim=0)  ### numGroup x fs
        slide_sub_labels = torch.cat(slide_sub_labels, dim=0)  ### numGroup
        loss0 = ce_cri(slide_sub_preds, slide_sub_labels).mean()
        optimizer0.zero_grad()
        loss0.backward(retain_graph=True)
        torch.nn.utils.clip_grad_norm_(dimReduction.parameters(), grad_clipping)
        torch.nn.utils.clip_grad_norm_(attention.parameters(), grad_clipping)
        torch.nn.utils.clip_grad_norm_(classifier.parameters(), grad_clipping)
        optimizer0.step()

        ## optimization for the second tier
        gSlidePred = UClassifier(slide_pseudo_feat)
        loss1 = ce_cri(gSlidePred, tslideLabel).mean()
        optimizer1.zero_grad()
        loss1.backward()  # expect: GG103
        torch.nn.utils.clip_grad_norm_(UClassifier.parameters(), grad_clipping)
        optimizer1.step()
        print(loss0.item(), loss1.item())


in_chn, mDim = 12, 16
classifier = Classifier_1fc(mDim, 2)
attention = Attention_Gated(mDim)
dimReduction = DimReduction(in_chn, m_dim=mDim)
attCls = Attention_with_Classifier(L=mDim, num_cls=2)

trainable_parameters = []
trainable_parameters += list(classifier.parameters())
trainable_parameters += list(attention.parameters())
trainable_parameters += list(dimReduction.parameters())
optimizer_adam0 = torch.optim.Adam(trainable_parameters, lr=1e-4, weight_decay=1e-4)
optimizer_adam1 = torch.optim.Adam(attCls.parameters(), lr=1e-4, weight_decay=1e-4)
ce_cri = torch.nn.CrossEntropyLoss(reduction='none')

slides = [(torch.randn(20, in_chn), torch.randint(0, 2, (1,))) for _ in range(3)]
for epoch in range(2):
    train_attention_preFeature_DTFD(slides, classifier, dimReduction, attention, attCls,
                                    optimizer_adam0, optimizer_adam1, ce_cri)
