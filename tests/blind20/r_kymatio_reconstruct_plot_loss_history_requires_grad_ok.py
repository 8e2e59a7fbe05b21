# Source: https://github.com/kymatio/kymatio/pull/826
"""kymatio example ``examples/1d/reconstruct_torch.py``: reconstruct a harmonic signal from its 1D
scattering transform by gradient descent on a random guess, then plot the loss history.

The loop appends the loss tensor itself to ``history`` (``history.append(err)``).  ``err`` is
computed from the scattering of ``y`` (a leaf that requires grad), so every entry still requires
grad.  At the end ``plt.plot(history)`` lets matplotlib turn the list into an array
(``np.atleast_1d``), numpy calls ``Tensor.__array__`` -> ``numpy()`` on each entry and torch
raises "Can't call numpy() on Tensor that requires grad".  The PR's fix: append
``err.detach()``.

Stand-ins: a tiny differentiable ``Scattering1D`` (fixed filter bank, modulus, low-pass average)
and a matplotlib ``plt`` whose ``plot`` converts its data with ``np.atleast_1d`` as matplotlib
does.  Sizes reduced (T = 2**8, 30 iterations).
"""
import numpy as np
import torch

from torch.autograd import backward


# ---- stand-in for matplotlib.pyplot ----
class _Pyplot:
    def figure(self, figsize=None):
        pass

    def plot(self, *args):
        for a in args:
            np.atleast_1d(a)

    def specgram(self, x, Fs=None):
        np.atleast_1d(x)

    def title(self, s):
        pass

    def show(self):
        pass


plt = _Pyplot()


# ---- stand-in for kymatio.torch.Scattering1D ----
class Scattering1D:
    def __init__(self, J, shape, Q=1):
        self.J = J
        self.T = shape
        n_filters = J * Q
        t = torch.arange(-16, 17, dtype=torch.float32)
        freqs = torch.linspace(0.05, 0.45, n_filters)
        window = torch.hann_window(33, periodic=False)
        self.psi_real = (torch.cos(2 * np.pi * freqs[:, None] * t) * window)[:, None, :]
        self.psi_imag = (torch.sin(2 * np.pi * freqs[:, None] * t) * window)[:, None, :]
        self.phi = (window / window.sum())[None, None, :]

    def __call__(self, x):
        x = x.reshape(1, 1, -1)
        re = torch.nn.functional.conv1d(x, self.psi_real, padding=16)
        im = torch.nn.functional.conv1d(x, self.psi_imag, padding=16)
        U1 = torch.sqrt(re ** 2 + im ** 2 + 1e-8)
        S0 = torch.nn.functional.conv1d(x, self.phi, padding=16, stride=2 ** self.J)
        S1 = torch.nn.functional.conv1d(U1.reshape(-1, 1, U1.shape[-1]), self.phi,
                                        padding=16, stride=2 ** self.J)
        return torch.cat([S0.reshape(-1), S1.reshape(-1)])


def generate_harmonic_signal(T, num_intervals=4, gamma=0.9, random_state=42):
    """
    Generates a harmonic signal, which is made of piecewise constant notes
    (of random fundamental frequency), with half overlap
    """
    rng = np.random.RandomState(random_state)
    num_notes = 2 * (num_intervals - 1) + 1
    support = T // num_intervals
    half_support = support // 2

    base_freq = 0.1 * rng.rand(num_notes) + 0.05
    phase = 2 * np.pi * rng.rand(num_notes)
    window = np.hanning(support)
    x = np.zeros(T, dtype='float32')
    t = np.arange(0, support)
    u = 2 * np.pi * t
    for i in range(num_notes):
        ind_start = i * half_support
        note = np.zeros(support)
        for k in range(1):
            note += (np.power(gamma, k) *
                     np.cos(u * (k + 1) * base_freq[i] + phase[i]))
        x[ind_start:ind_start + support] += note * window

    return x


T = 2 ** 8
x = torch.from_numpy(generate_harmonic_signal(T))
plt.figure(figsize=(8, 2))
plt.plot(x.numpy())
plt.title("Original signal")

plt.figure(figsize=(8, 8))
plt.specgram(x.numpy(), Fs=1024)
plt.title("Spectrogram of original signal")

J = 3
Q = 4

scattering = Scattering1D(J, T, Q)

Sx = scattering(x)

learning_rate = 100
bold_driver_accelerator = 1.1
bold_driver_brake = 0.55
n_iterations = 30

# Random guess to initialize.
torch.manual_seed(0)
y = torch.randn((T,), requires_grad=True)
Sy = scattering(y)

history = []
signal_update = torch.zeros_like(x)

# Iterate to recontsruct random guess to be close to target.
for k in range(n_iterations):
    # Backpropagation.
    err = torch.norm(Sx - Sy)

    if k % 10 == 0:
        print('Iteration %3d, loss %.2f' % (k, err.detach().numpy()))

    # Measure the new loss.
    history.append(err.detach())

    backward(err)

    delta_y = y.grad

    # Gradient descent
    with torch.no_grad():
        signal_update = - learning_rate * delta_y
        new_y = y + signal_update
    new_y.requires_grad = True

    # New forward propagation.
    Sy = scattering(new_y)

    if history[k] > history[k - 1]:
        learning_rate *= bold_driver_brake
    else:
        learning_rate *= bold_driver_accelerator
        y = new_y

plt.figure(figsize=(8, 2))
plt.plot(history)
plt.title("MSE error vs. iterations")

plt.figure(figsize=(8, 2))
plt.plot(y.detach().numpy())
plt.title("Reconstructed signal")

plt.figure(figsize=(8, 8))
plt.specgram(y.detach().numpy(), Fs=1024)
plt.title("Spectrogram of reconstructed signal")

plt.show()
