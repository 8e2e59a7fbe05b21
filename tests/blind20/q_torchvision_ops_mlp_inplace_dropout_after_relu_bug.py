# Source: https://github.com/pytorch/vision/issues/7174
"""torchvision 0.14 `torchvision.ops.MLP` (torchvision/ops/misc.py): the block is
Linear -> activation -> Dropout for each hidden layer, and `inplace` defaults to True and is
passed to both the activation and the Dropout. With `dropout > 0`, `nn.Dropout(p, inplace=True)`
overwrites the output of `nn.ReLU(inplace=True)`, which ReLU saved for its backward, so the
reporter's second line raises at `.backward()`: "one of the variables needed for gradient
computation has been modified by an inplace operation: [torch.FloatTensor [3]], which is output 0
of ReluBackward0, is at version 4; expected version 3" (the first line, with `inplace=False`,
works).

Fix (in the _ok twin, as torchvision did after the issue): the default becomes `inplace=None`,
meaning "use the layers' own defaults" (not in place), so the default MLP trains with dropout.

The MLP class is copied in (torchvision is not used); the reporter's two calls are kept.
"""
from typing import Callable, List, Optional

import torch


class MLP(torch.nn.Sequential):
    """This block implements the multi-layer perceptron (MLP) module."""

    def __init__(
        self,
        in_channels: int,
        hidden_channels: List[int],
        norm_layer: Optional[Callable[..., torch.nn.Module]] = None,
        activation_layer: Optional[Callable[..., torch.nn.Module]] = torch.nn.ReLU,
        inplace: Optional[bool] = True,
        bias: bool = True,
        dropout: float = 0.0,
    ):
        # The addition of `norm_layer` is inspired from the implementation of TorchMultimodal:
        # https://github.com/facebookresearch/multimodal/blob/5dec8a/torchmultimodal/modules/layers/mlp.py
        params = {} if inplace is None else {"inplace": inplace}

        layers = []
        in_dim = in_channels
        for hidden_dim in hidden_channels[:-1]:
            layers.append(torch.nn.Linear(in_dim, hidden_dim, bias=bias))
            if norm_layer is not None:
                layers.append(norm_layer(hidden_dim))
            layers.append(activation_layer(**params))
            layers.append(torch.nn.Dropout(dropout, **params))
            in_dim = hidden_dim

        layers.append(torch.nn.Linear(in_dim, hidden_channels[-1], bias=bias))
        layers.append(torch.nn.Dropout(dropout, **params))

        super().__init__(*layers)


torch.manual_seed(0)
MLP(3, [3, 3], dropout=0.5, inplace=False)(torch.rand(3)).sum().backward()  # no error
# the reporter: "causes an error"
MLP(3, [3, 3], dropout=0.5)(torch.rand(3)).sum().backward()  # expect: GG103
