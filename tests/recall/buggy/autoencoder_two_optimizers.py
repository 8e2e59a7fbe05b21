"""Autoencoder with an auxiliary classifier and one optimizer per part: the reconstruction loss is
backwarded and the decoder stepped, then the classification loss over the same codes is backwarded."""
import torch
import torch.nn as nn

encoder = nn.Sequential(nn.Linear(10, 6), nn.ReLU(), nn.Linear(6, 3))
decoder = nn.Sequential(nn.Linear(3, 6), nn.ReLU(), nn.Linear(6, 10))
classifier = nn.Linear(3, 2)
opt_ae = torch.optim.Adam([*encoder.parameters(), *decoder.parameters()], lr=1e-3)
opt_cls = torch.optim.Adam(classifier.parameters(), lr=1e-3)

for step in range(2):
    x, y = torch.randn(6, 10), torch.randint(0, 2, (6,))
    codes = encoder(x)
    rec_loss = nn.functional.mse_loss(decoder(codes), x)
    opt_ae.zero_grad()
    rec_loss.backward()
    opt_ae.step()
    cls_loss = nn.functional.cross_entropy(classifier(codes), y)
    opt_cls.zero_grad()
    cls_loss.backward()  # expect: GG101
    opt_cls.step()
