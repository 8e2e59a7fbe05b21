# Source: https://github.com/Animadversio/GAN-Geometry/issues/4
"""GAN-Geometry's GANForwardHVPOperator as the reporter used it: perturbation vectors are added to
a latent code, the generator renders images, a feature objective scores them, and
torch.autograd.grad(activs.mean(), perturb_vecs) takes the gradient of the mean activation (the
reporter's fix), which is scalar."""
import torch
import torch.nn as nn


class GANForwardHVPOperator:
    def __init__(self, model, code, objective, preprocess=lambda img: img):
        self.model, self.code, self.objective, self.preprocess = model, code, objective, preprocess

    def apply(self, vecs, eps=1e-2):
        perturb_vecs = (self.code + eps * vecs).detach().requires_grad_(True)
        img = self.model(perturb_vecs)
        resz_img = self.preprocess(img)
        activs = self.objective(resz_img)
        ftgrad_both = torch.autograd.grad(activs.mean(), perturb_vecs, retain_graph=False, create_graph=False,
                                          only_inputs=True)[0]
        return ftgrad_both


G = nn.Sequential(nn.Linear(8, 3 * 4 * 4), nn.Tanh(), nn.Unflatten(1, (3, 4, 4)))
feature_net = nn.Sequential(nn.Conv2d(3, 4, 3), nn.ReLU())
objective = lambda img: feature_net(img)[:, 1, 1, 1]  # one unit's activation per image
op = GANForwardHVPOperator(G, torch.randn(1, 8), objective)
grads = op.apply(torch.randn(5, 8))
print(grads.shape)
