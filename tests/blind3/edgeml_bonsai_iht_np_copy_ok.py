# Source: https://github.com/microsoft/EdgeML/issues/119
"""EdgeML's Bonsai trainer with the maintainers' fix for the report (commit "IHT Routine Fix #119",
then "detach followed by clone"): the thresholded supports are copied with
`__thrsdW.detach().clone()` instead of `np.copy(__thrsdW)`, so no tensor that requires grad goes
through numpy."""
import numpy as np
import torch


def hardThreshold(A: torch.Tensor, s):
    '''Hard thresholds and modifies in-place nn.Parameter A with sparsity s'''
    A_ = A.data.cpu().detach().numpy().ravel()
    if len(A_) > 0:
        th = np.percentile(np.abs(A_), (1 - s) * 100.0, method='higher')
        A_[np.abs(A_) < th] = 0.0
    A_ = A_.reshape(A.shape)
    return torch.tensor(A_, requires_grad=True)


def copySupport(src, dst):
    '''zero out entries in dst.data that are zeros in src tensor'''
    return dst * (src != 0).float()


class Bonsai(torch.nn.Module):
    def __init__(self, numClasses, dataDimension, projectionDimension, treeDepth=1, sigma=1.0):
        super().__init__()
        self.numClasses = numClasses
        self.projectionDimension = projectionDimension
        self.treeDepth = treeDepth
        self.sigma = sigma
        self.internalNodes = 2**treeDepth - 1
        self.totalNodes = 2 * self.internalNodes + 1
        self.Z = torch.nn.Parameter(torch.randn(projectionDimension, dataDimension))
        self.W = torch.nn.Parameter(torch.randn(numClasses * self.totalNodes, projectionDimension))
        self.V = torch.nn.Parameter(torch.randn(numClasses * self.totalNodes, projectionDimension))
        self.T = torch.nn.Parameter(torch.randn(self.internalNodes, projectionDimension))

    def forward(self, X, sigmaI):
        X_ = torch.matmul(self.Z, X.t()) / self.projectionDimension
        W = self.W.view(self.totalNodes, self.numClasses, -1)
        V = self.V.view(self.totalNodes, self.numClasses, -1)
        go_left = torch.sigmoid(sigmaI * torch.matmul(self.T[0], X_))
        path = [torch.ones_like(go_left), go_left, 1 - go_left]
        score = 0
        for node in range(self.totalNodes):
            node_score = torch.matmul(W[node], X_) * torch.tanh(self.sigma * torch.matmul(V[node], X_))
            score = score + path[node] * node_score
        return score.t(), X_


class BonsaiTrainer:
    def __init__(self, bonsaiObj, lW, lT, lV, lZ, sW, sT, sV, sZ, learningRate, device="cpu"):
        self.bonsaiObj = bonsaiObj
        self.lW, self.lV, self.lT, self.lZ = lW, lV, lT, lZ
        self.sW, self.sV, self.sT, self.sZ = sW, sV, sT, sZ
        self.device = device
        self.learningRate = learningRate
        self.optimizer = torch.optim.Adam(self.bonsaiObj.parameters(), lr=self.learningRate)
        self.isDenseTraining = self.sW > 0.99 and self.sV > 0.99 and self.sZ > 0.99 and self.sT > 0.99

    def loss(self, logits, labels):
        regLoss = 0.5 * (self.lZ * (torch.norm(self.bonsaiObj.Z)**2) +
                         self.lW * (torch.norm(self.bonsaiObj.W)**2) +
                         self.lV * (torch.norm(self.bonsaiObj.V)**2) +
                         self.lT * (torch.norm(self.bonsaiObj.T))**2)
        marginLoss = torch.nn.functional.cross_entropy(logits, labels.argmax(dim=1))
        return marginLoss + regLoss, marginLoss, regLoss

    def runHardThrsd(self):
        currW = self.bonsaiObj.W.data
        currV = self.bonsaiObj.V.data
        currZ = self.bonsaiObj.Z.data
        currT = self.bonsaiObj.T.data

        __thrsdW = hardThreshold(currW.cpu(), self.sW)
        __thrsdV = hardThreshold(currV.cpu(), self.sV)
        __thrsdZ = hardThreshold(currZ.cpu(), self.sZ)
        __thrsdT = hardThreshold(currT.cpu(), self.sT)

        self.bonsaiObj.W.data = torch.FloatTensor(
            __thrsdW).to(self.device)
        self.bonsaiObj.V.data = torch.FloatTensor(
            __thrsdV).to(self.device)
        self.bonsaiObj.Z.data = torch.FloatTensor(
            __thrsdZ).to(self.device)
        self.bonsaiObj.T.data = torch.FloatTensor(
            __thrsdT).to(self.device)

        self.__thrsdW = torch.FloatTensor(
            __thrsdW.detach().clone()).to(self.device)
        self.__thrsdV = torch.FloatTensor(
            __thrsdV.detach().clone()).to(self.device)
        self.__thrsdZ = torch.FloatTensor(
            __thrsdZ.detach().clone()).to(self.device)
        self.__thrsdT = torch.FloatTensor(
            __thrsdT.detach().clone()).to(self.device)

    def runSparseTraining(self):
        self.bonsaiObj.W.data = copySupport(self.__thrsdW, self.bonsaiObj.W.data)
        self.bonsaiObj.V.data = copySupport(self.__thrsdV, self.bonsaiObj.V.data)
        self.bonsaiObj.Z.data = copySupport(self.__thrsdZ, self.bonsaiObj.Z.data)
        self.bonsaiObj.T.data = copySupport(self.__thrsdT, self.bonsaiObj.T.data)

    def train(self, batchSize, totalEpochs, Xtrain, Ytrain):
        numIters = int(Xtrain.shape[0] / batchSize)
        totalBatches = numIters * totalEpochs
        sigmaI = 1
        counter = 0
        trimlevel = 5
        ihtDone = 0
        for i in range(totalEpochs):
            trainLoss = 0.0
            for j in range(numIters):
                batchX = Xtrain[j * batchSize:(j + 1) * batchSize]
                batchY = Ytrain[j * batchSize:(j + 1) * batchSize]

                self.optimizer.zero_grad()
                logits, _ = self.bonsaiObj(batchX.to(self.device), sigmaI)
                batchLoss, _, _ = self.loss(logits, batchY.to(self.device))
                batchLoss.backward()
                self.optimizer.step()
                trainLoss += batchLoss.item()

                # Training routine involving IHT and sparse retraining
                if (counter >= int(totalBatches / 3.0) and
                    (counter < int(2 * totalBatches / 3.0)) and
                    counter % trimlevel == 0 and
                        self.isDenseTraining is False):
                    self.runHardThrsd()
                    ihtDone = 1
                elif ((ihtDone == 1 and counter >= int(totalBatches / 3.0) and
                       (counter < int(2 * totalBatches / 3.0)) and
                       counter % trimlevel != 0 and
                       self.isDenseTraining is False) or
                        (counter >= int(2 * totalBatches / 3.0) and
                            self.isDenseTraining is False)):
                    self.runSparseTraining()
                counter += 1
            print("Epoch", i, "train loss", trainLoss / numIters)


Xtrain = torch.randn(40, 6)
Ytrain = torch.nn.functional.one_hot(torch.randint(0, 3, (40,)), 3).float()
bonsaiObj = Bonsai(numClasses=3, dataDimension=6, projectionDimension=4)
trainer = BonsaiTrainer(bonsaiObj, 1e-3, 1e-3, 1e-3, 1e-4, sW=0.5, sT=0.5, sV=0.5, sZ=0.5,
                        learningRate=0.01)
trainer.train(batchSize=10, totalEpochs=6, Xtrain=Xtrain, Ytrain=Ytrain)
