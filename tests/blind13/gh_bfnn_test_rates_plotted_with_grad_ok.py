# Source: https://github.com/w5688414/BFNN/issues/1
"""BFNN's ffbn_test.py, fixed (the thread gives no fix; this is the right one): the evaluation
over the SNRs runs under torch.no_grad(), so the rates appended for plotting carry no graph and
matplotlib's conversion to a NumPy array works. matplotlib's plot, the .mat loader and the saved
model are small stand-ins written here (the model is freshly built).
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class BFNN(nn.Module):
    def __init__(self):
        super(BFNN, self).__init__()
        self.batch_norm_v2 = nn.BatchNorm2d(1)
        self.flatten = nn.Flatten()
        self.batch_norm_v1 = nn.BatchNorm1d(128)
        self.batch_norm1 = nn.BatchNorm1d(256)
        self.hidden1 = nn.Linear(128, 256)
        self.hidden2 = nn.Linear(256, 128)
        self.hidden3 = nn.Linear(128, 64)

    def forward(self, x, perfect_CSI, SNR_input):
        x = self.batch_norm_v2(x)
        x = self.flatten(x)
        x = self.batch_norm_v1(x)
        x = F.relu(self.hidden1(x))
        x = self.batch_norm1(x)
        x = F.relu(self.hidden2(x))
        x = self.hidden3(x)
        # V_RF
        x1 = torch.cos(x)
        x2 = torch.sin(x)
        VRF = torch.cat((x1, x2), 1)
        hv = torch.bmm(perfect_CSI.view(-1, 1, 128), VRF.view(-1, 128, 1))
        hv = self.flatten(hv)
        tmp_input = torch.as_tensor(1 + SNR_input / 64 * torch.pow(torch.abs(hv), 2), dtype=torch.float32)
        rate = torch.log(tmp_input) / torch.log(torch.tensor(2.0, dtype=torch.float32))
        return -rate


def mat_load(path, n=16, antennas=64):
    """Stand-in for utils.mat_load: perfect and estimated CSI of n users (pcsi.mat, ecsi.mat)."""
    H = (np.random.randn(n, 1, antennas) + 1j * np.random.randn(n, 1, antennas)) / np.sqrt(2)
    H_est = H + 0.1 * (np.random.randn(n, 1, antennas) + 1j * np.random.randn(n, 1, antennas))
    return H, H_est


class PyplotStandIn:
    """Stand-in for matplotlib.pyplot: plot() converts its data as matplotlib's _check_1d does."""
    def __init__(self):
        self.lines = []

    def title(self, s):
        self.t = s

    def xlabel(self, s):
        self.x_label = s

    def ylabel(self, s):
        self.y_label = s

    def plot(self, x, y):
        xy = (np.atleast_1d(np.asarray(x)), np.atleast_1d(y))
        self.lines.append(xy)

    def show(self):
        pass


plt = PyplotStandIn()

model = BFNN()
model.eval()

path = 'train_set/example/test'
H, H_est = mat_load(path)
H_input = np.expand_dims(np.concatenate([np.real(H_est), np.imag(H_est)], 1), 1)
H = np.squeeze(H)
H = np.hstack((H.real, H.imag))
H_input = torch.from_numpy(H_input).to(dtype=torch.float32)
H = torch.from_numpy(H).to(dtype=torch.float32)
rate = []
for snr in range(-20, 25, 5):
    SNR = np.power(10, np.ones([H.shape[0], 1]) * snr / 10)
    SNR = torch.from_numpy(SNR)
    with torch.no_grad():
        outputs = model(H_input, H, SNR)
    y = outputs.mean()
    rate.append(-y)
print(rate)

plt.title("The result of BFNN")
plt.xlabel("SNR(dB)")
plt.ylabel("Spectral Efficiency")
plt.plot(range(-20, 25, 5), rate)
plt.show()
