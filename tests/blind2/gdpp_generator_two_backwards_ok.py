# Source: https://github.com/facebookresearch/pytorch_GAN_zoo/issues/83
"""pytorch_GAN_zoo's BaseGAN.optimizeParameters with the GDPP config, fixed: the adversarial and
diversity losses of the generator are summed and backwarded once (the paper's loss_g = loss_adv +
loss_gdpp). The maintainers' fix (PR #85) put retain_graph=True on lossGFake.backward() instead,
which leaves GDPPLoss's own retain_graph=True retaining a graph nobody walks; here GDPPLoss returns
the loss tensor (backward=False) and no graph is retained."""
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim


def GDPPLoss(phiFake, phiReal, backward=True):
    def compute_diversity(phi):
        phi = F.normalize(phi, p=2, dim=1)
        SB = torch.mm(phi, phi.t())
        eigVals, eigVecs = torch.linalg.eigh(SB)
        return eigVals, eigVecs

    def normalize_min_max(eigVals):
        minV, maxV = torch.min(eigVals), torch.max(eigVals)
        return (eigVals - minV) / (maxV - minV)

    fakeEigVals, fakeEigVecs = compute_diversity(phiFake)
    realEigVals, realEigVecs = compute_diversity(phiReal)

    magnitudeLoss = 0.0001 * F.mse_loss(target=realEigVals, input=fakeEigVals)
    structureLoss = -torch.sum(torch.mul(fakeEigVecs, realEigVecs), 0)
    normalizedRealEigVals = normalize_min_max(realEigVals)
    weightedStructureLoss = torch.sum(torch.mul(normalizedRealEigVals, structureLoss))
    gdppLoss = magnitudeLoss + weightedStructureLoss

    if backward:
        gdppLoss.backward(retain_graph=True)

    return gdppLoss


class WGANGP:
    def getCriterion(self, input, status):
        return -input[:, 0].sum() if status else input[:, 0].sum()


class NetD(nn.Module):
    def __init__(self, dimIn, dimFeatures=8):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(dimIn, dimFeatures), nn.LeakyReLU(0.2))
        self.decision = nn.Linear(dimFeatures, 1)

    def forward(self, x, getFeature=False):
        phi = self.features(x)
        out = self.decision(phi)
        if getFeature:
            return out, phi
        return out


class GDPPGAN:
    def __init__(self, dimLatentVector=6, dimOutput=12, GDPP=True):
        self.noiseVectorDim = dimLatentVector
        self.GDPP = GDPP
        self.lossCriterion = WGANGP()
        self.netG = nn.Sequential(nn.Linear(dimLatentVector, 16), nn.ReLU(), nn.Linear(16, dimOutput))
        self.netD = NetD(dimOutput)
        self.optimizerD = optim.Adam(self.netD.parameters(), lr=1e-3, betas=(0.0, 0.99))
        self.optimizerG = optim.Adam(self.netG.parameters(), lr=1e-3, betas=(0.0, 0.99))

    def buildNoiseData(self, n_samples):
        return torch.randn(n_samples, self.noiseVectorDim)

    def optimizeParameters(self, input_batch):
        allLosses = {}
        self.real_input = input_batch
        n_samples = self.real_input.size()[0]

        # Update the discriminator
        self.optimizerD.zero_grad()
        predRealD = self.netD(self.real_input)
        lossD = self.lossCriterion.getCriterion(predRealD, True)
        predFakeG = self.netG(self.buildNoiseData(n_samples)).detach()
        predFakeD = self.netD(predFakeG)
        lossD += self.lossCriterion.getCriterion(predFakeD, False)
        lossD.backward()
        self.optimizerD.step()
        allLosses["lossD"] = lossD.item()

        # Update the generator
        self.optimizerG.zero_grad()
        self.optimizerD.zero_grad()
        inputNoise = self.buildNoiseData(n_samples)
        predFakeG = self.netG(inputNoise)
        predFakeD, phiGFake = self.netD(predFakeG, True)
        lossGFake = self.lossCriterion.getCriterion(predFakeD, True)
        allLosses["lossG_fake"] = lossGFake.item()
        lossG = lossGFake

        if self.GDPP:
            _, phiDReal = self.netD.forward(self.real_input, True)
            lossGDPP = GDPPLoss(phiDReal, phiGFake, backward=False)
            allLosses["lossG_GDPP"] = lossGDPP.item()
            lossG = lossG + lossGDPP
        lossG.backward()
        self.optimizerG.step()
        return allLosses


model = GDPPGAN()
for step in range(3):
    print(step, model.optimizeParameters(torch.randn(8, 12)))
