# Source: https://github.com/JeiKeiLim/kindle/issues/17
"""kindle (a YAML-driven PyTorch model builder): a model with two Conv branches whose
outputs are merged by the `Add` module, trained with kindle's TorchTrainer.

`Add.forward` started from `result = x[0]` and accumulated with `result += x[i]`.
`x[0]` is the output of a kindle `Conv` (conv -> batch norm -> ReLU); ReluBackward0 saved
that very tensor, so the in-place add bumps its version and `loss.backward()` in
TorchTrainer.train raises "one of the variables needed for gradient computation has been
modified by an inplace operation: [torch.FloatTensor [...]], which is output 0 of
ReluBackward0, is at version 1; expected version 0 instead" (the issue's message).

The fix (kindle commit afca2eb, "Fix Add module gradient fail issue", shown in the _ok
twin): `result = result + x[i]`. kindle's YAML parser is replaced by a small parser of
the same config dict; the modules and the trainer keep kindle's structure.
"""
from typing import List, Tuple, Union

import torch
from torch import nn, optim


# ---- kindle/modules -----------------------------------------------------------------
class Conv(nn.Module):
    """Standard convolution with batch normalization and activation."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, activation="ReLU"):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride,
                              padding=kernel_size // 2, bias=False)
        self.batch_norm = nn.BatchNorm2d(out_channels)
        self.activation = getattr(nn, activation)() if activation else nn.Identity()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.activation(self.batch_norm(self.conv(x)))


class Add(nn.Module):
    """Add module for Kindle."""

    @classmethod
    def forward(cls, x: Union[Tuple[torch.Tensor, ...], List[torch.Tensor]]) -> torch.Tensor:
        result = x[0]
        for i in range(1, len(x)):
            result += x[i]

        return result


class GlobalAvgPool(nn.Module):
    def forward(self, x):
        return nn.functional.adaptive_avg_pool2d(x, 1)


# ---- kindle/model.py ------------------------------------------------------------------
class Model(nn.Module):
    """PyTorch model class."""

    def __init__(self, cfg, verbose=False):
        super().__init__()
        self.model, self.output_save = self._parse_model(cfg)

    def _parse_model(self, cfg):
        in_channels = []
        layers = []
        output_save = []
        ch = cfg["input_channel"]
        for i, (idx, repeat, module, args) in enumerate(cfg["backbone"]):
            in_ch = ch if i == 0 else (in_channels[idx] if isinstance(idx, int) else in_channels[idx[0]])
            if module == "Conv":
                m = Conv(in_ch, *args)
                out_ch = args[0]
            elif module == "Add":
                m = Add()
                out_ch = in_ch
            elif module == "GlobalAvgPool":
                m = GlobalAvgPool()
                out_ch = in_ch
            elif module == "Flatten":
                m = nn.Flatten()
                out_ch = in_ch
            elif module == "Linear":
                m = nn.Linear(in_ch, args[0])
                out_ch = args[0]
            else:
                raise ValueError(module)
            m.module_idx, m.from_idx = i, idx
            if idx != -1:
                output_save.extend([j % i for j in ([idx] if isinstance(idx, int) else idx) if j != -1])
            layers.append(m)
            in_channels.append(out_ch)
        return nn.Sequential(*layers), sorted(set(output_save))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.forward_once(x)

    def forward_once(self, x: torch.Tensor) -> torch.Tensor:
        y: List[Union[torch.Tensor, None]] = []
        for module in self.model:
            if module.from_idx != -1:
                x = (y[module.from_idx] if isinstance(module.from_idx, int)
                     else [x if j == -1 else y[j] for j in module.from_idx])
            x = module(x)
            y.append(x if module.module_idx in self.output_save else None)
        return x


# ---- kindle/trainer.py ----------------------------------------------------------------
class TorchTrainer:
    def __init__(self, model, criterion, optimizer, device="cpu"):
        self.model = model
        self.criterion = criterion
        self.optimizer = optimizer
        self.device = device

    def train(self, train_dataloader, n_epoch):
        for epoch in range(n_epoch):
            running_loss, correct, total = 0.0, 0, 0
            self.model.train()
            for batch, (data, labels) in enumerate(train_dataloader):
                data, labels = data.to(self.device), labels.to(self.device)
                self.optimizer.zero_grad()
                outputs = self.model(data)
                loss = self.criterion(outputs, labels)
                loss.backward()  # expect: GG103
                self.optimizer.step()

                _, predicted = torch.max(outputs, 1)
                total += labels.size(0)
                correct += (predicted == labels).sum().item()
                running_loss += loss.item()
            print(f"Train: [{epoch + 1:03d}] Loss: {running_loss / (batch + 1):.3f}, "
                  f"Acc: {100 * correct / total:.2f}%")


def get_trainer(cfg):
    device = torch.device("cpu")
    model = Model(cfg, verbose=True)
    model.to(device)
    criterion = nn.CrossEntropyLoss()
    optimizer = optim.Adam(model.parameters())
    trainer = TorchTrainer(model, criterion, optimizer, device=device)
    return model, trainer


def test_custom_module_model():
    cfg = {
        "input_size": [16, 16],
        "input_channel": 3,
        "depth_multiple": 1.0,
        "width_multiple": 1.0,
        "backbone": [
            # [from, repeat, module, args]
            [-1, 1, "Conv", [8, 3, 1]],
            [-1, 1, "Conv", [8, 3, 1]],
            [[0, 1], 1, "Add", []],
            [-1, 1, "GlobalAvgPool", []],
            [-1, 1, "Flatten", []],
            [-1, 1, "Linear", [10]],
        ],
    }
    model, trainer = get_trainer(cfg)
    train_loader = [(torch.randn(4, 3, 16, 16), torch.randint(0, 10, (4,))) for _ in range(3)]
    trainer.train(train_loader, n_epoch=1)


if __name__ == "__main__":
    torch.manual_seed(0)
    test_custom_module_model()
