# Source: https://github.com/Trusted-AI/adversarial-robustness-toolbox/issues/498
"""The user's PGD evaluation with the fix from the thread: the test loop no longer runs inside
`with torch.no_grad():`, so the classifier's loss_gradient backwards a loss with a graph; the
classifier's predict still disables gradients itself. ART's PyTorchClassifier and PGD are small
stand-ins written here, following ART 1.3's code paths; the data are random.
"""
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.fc1 = nn.Linear(16 * 4 * 4, 32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = x.view(x.size(0), -1)
        return self.fc2(F.relu(self.fc1(x)))


class PyTorchClassifier:
    """Stand-in for art.estimators.classification.PyTorchClassifier."""
    def __init__(self, model, loss, input_shape, nb_classes, clip_values=(0.0, 1.0), device_type="cpu"):
        self._model = model
        self._loss = loss
        self.input_shape = input_shape
        self.nb_classes = nb_classes
        self.clip_values = clip_values
        self._device = torch.device(device_type)

    def predict(self, x, batch_size=128):
        self._model.eval()
        results = []
        for m in range(int(np.ceil(x.shape[0] / batch_size))):
            begin, end = m * batch_size, min((m + 1) * batch_size, x.shape[0])
            with torch.no_grad():
                model_outputs = self._model(torch.from_numpy(x[begin:end]).to(self._device))
            results.append(model_outputs.detach().cpu().numpy())
        return np.concatenate(results)

    def loss_gradient(self, x, y):
        self._model.eval()
        x_grad = torch.from_numpy(x).to(self._device)
        x_grad.requires_grad = True
        labels_t = torch.from_numpy(np.argmax(y, axis=1)).to(self._device)
        model_outputs = self._model(x_grad)
        loss = self._loss(model_outputs, labels_t)
        self._model.zero_grad()
        loss.backward()
        grads = x_grad.grad.cpu().numpy().copy()
        return grads


class ProjectedGradientDescent:
    """Stand-in for art.attacks.evasion.ProjectedGradientDescent (numpy framework path)."""
    def __init__(self, estimator, norm=np.inf, eps=0.03, eps_step=0.01, max_iter=5, batch_size=8):
        self.estimator = estimator
        self.norm, self.eps, self.eps_step = norm, eps, eps_step
        self.max_iter, self.batch_size = max_iter, batch_size

    def _compute_perturbation(self, batch, batch_labels):
        grad = self.estimator.loss_gradient(batch, batch_labels)
        return np.sign(grad)

    def _apply_perturbation(self, batch, perturbation):
        batch = batch + self.eps_step * perturbation
        return np.clip(batch, *self.estimator.clip_values).astype(np.float32)

    def _projection(self, x_adv, x):
        return (x + np.clip(x_adv - x, -self.eps, self.eps)).astype(np.float32)

    def generate(self, x, y=None):
        if y is None:
            y = np.eye(self.estimator.nb_classes)[np.argmax(self.estimator.predict(x), axis=1)]
        adv_x = x.astype(np.float32).copy()
        for batch_id in range(int(np.ceil(x.shape[0] / self.batch_size))):
            begin, end = batch_id * self.batch_size, (batch_id + 1) * self.batch_size
            batch, batch_labels = adv_x[begin:end], y[begin:end]
            for i_max_iter in range(self.max_iter):
                perturbation = self._compute_perturbation(batch, batch_labels)
                batch = self._projection(self._apply_perturbation(batch, perturbation), x[begin:end])
            adv_x[begin:end] = batch
        return adv_x


def test_loader(n_batches=2, batch_size=8):
    for _ in range(n_batches):
        yield torch.rand(batch_size, 3, 16, 16), torch.randint(0, 10, (batch_size,))


model = Net()
criterion = nn.CrossEntropyLoss()
classifier = PyTorchClassifier(model=model, loss=criterion, input_shape=(3, 16, 16), nb_classes=10)
attack = ProjectedGradientDescent(estimator=classifier, eps=8 / 255, eps_step=2 / 255, max_iter=3)

correct, total = 0, 0
for batch_idx, (inputs, targets) in enumerate(test_loader()):
    x_adv = attack.generate(x=inputs.numpy())
    predictions = classifier.predict(x_adv)
    correct += int((np.argmax(predictions, axis=1) == targets.numpy()).sum())
    total += targets.size(0)
print("Accuracy on adversarial test examples: {:.1f}%".format(100.0 * correct / total))
