# Source: https://github.com/meta-pytorch/tnt/pull/551
"""TorchTNT's scalar_to_float() with the PR's fix: the tensor is detached before the conversion,
`float(scalar.cpu().detach().numpy().item())`, so logging the training loss tensor works."""
from collections import OrderedDict
from time import monotonic

import torch
from numpy import ndarray
from torch import Tensor


def scalar_to_float(scalar):
    if isinstance(scalar, Tensor):
        scalar = scalar.squeeze()
        numel = scalar.numel()
        if numel != 1:
            raise ValueError(
                f"Scalar tensor must contain a single item, {numel} given."
            )

        return float(scalar.cpu().detach().numpy().item())
    elif isinstance(scalar, ndarray):
        numel = scalar.size
        if numel != 1:
            raise ValueError(
                f"Scalar ndarray must contain a single item, {numel} given."
            )
        return float(scalar.item())

    return float(scalar)


class InMemoryLogger:
    """Simple logger that buffers data in-memory."""

    def __init__(self) -> None:
        self._log_buffer = OrderedDict()

    @property
    def log_buffer(self):
        return self._log_buffer

    def log_dict(self, payload, step: int) -> None:
        for k, v in payload.items():
            self.log(k, v, step)

    def log(self, name: str, data, step: int) -> None:
        self._log_buffer.setdefault(step, {})[name] = scalar_to_float(data)
        self._log_buffer[step]["step"] = step
        self._log_buffer[step]["time"] = monotonic()

    def close(self) -> None:
        self._log_buffer.clear()


def train(module, dataloader, optimizer, logger, max_epochs=2):
    step = 0
    for epoch in range(max_epochs):
        for inputs, targets in dataloader:
            outputs = module(inputs)
            loss = torch.nn.functional.cross_entropy(outputs, targets)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            logger.log("train_loss", loss, step)
            step += 1
    return step


module = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
optimizer = torch.optim.SGD(module.parameters(), lr=0.1)
dataloader = [(torch.randn(5, 4), torch.randint(0, 2, (5,))) for _ in range(3)]
logger = InMemoryLogger()
steps = train(module, dataloader, optimizer, logger)
print(steps, [round(v["train_loss"], 3) for v in logger.log_buffer.values()])
logger.close()
