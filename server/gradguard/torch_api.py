"""What GradGuard knows about the torch API, declared as data (the engine holds no torch names).

Every claim about whether an op saves tensors for backward is checked against real torch by
``tests/test_torch_api.py``: an op that saves tensors raises "backward through the graph a
second time" when its graph is walked twice, one that saves none does not.

Names are fully qualified after import-alias resolution (``F.relu`` -> ``torch.nn.functional.relu``).
"""

# Calls that create a fresh tensor: a leaf, requiring grad iff ``requires_grad=True`` is passed.
FACTORIES = frozenset({
    "torch.randn", "torch.rand", "torch.randint", "torch.zeros", "torch.ones", "torch.empty",
    "torch.full", "torch.arange", "torch.linspace", "torch.logspace", "torch.eye", "torch.normal",
    "torch.randn_like", "torch.rand_like", "torch.zeros_like", "torch.ones_like", "torch.empty_like",
    "torch.full_like", "torch.randperm", "torch.from_numpy", "torch.as_tensor",
})

# Calls that copy their argument into a new leaf and so sever its graph (torch.tensor(t)).
COPY_CONSTRUCTORS = frozenset({"torch.tensor", "torch.Tensor", "torch.FloatTensor", "torch.LongTensor"})

# Calls that make a leaf that requires grad from their first argument.
PARAMETERS = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter"})

# Differentiable torch functions -> whether their backward node saves tensors.
FUNCTIONS = {
    # no saved tensors
    "torch.add": False, "torch.sub": False, "torch.subtract": False, "torch.neg": False,
    "torch.sum": False, "torch.cat": False, "torch.stack": False, "torch.flatten": False,
    "torch.reshape": False, "torch.squeeze": False, "torch.unsqueeze": False,
    "torch.transpose": False, "torch.t": False, "torch.clone": False, "torch.chunk": False,
    "torch.split": False, "torch.narrow": False, "torch.permute": False,
    "torch.mean": False, "torch.nn.functional.dropout": True,
    # saved tensors
    "torch.mul": True, "torch.multiply": True, "torch.div": True, "torch.divide": True,
    "torch.mm": True, "torch.matmul": True, "torch.bmm": True, "torch.addmm": True,
    "torch.einsum": True, "torch.exp": True, "torch.log": True, "torch.pow": True,
    "torch.sqrt": True, "torch.sin": True, "torch.cos": True, "torch.tanh": True,
    "torch.sigmoid": True, "torch.relu": True, "torch.abs": True, "torch.softmax": True,
    "torch.log_softmax": True, "torch.norm": True, "torch.max": True, "torch.min": True,
    "torch.prod": True, "torch.where": True, "torch.clamp": True, "torch.square": True,
    "torch.nn.functional.relu": True, "torch.nn.functional.leaky_relu": True,
    "torch.nn.functional.gelu": True, "torch.nn.functional.silu": True,
    "torch.nn.functional.sigmoid": True, "torch.nn.functional.tanh": True,
    "torch.nn.functional.softmax": True, "torch.nn.functional.log_softmax": True,
    "torch.nn.functional.linear": True, "torch.nn.functional.conv1d": True,
    "torch.nn.functional.conv2d": True, "torch.nn.functional.mse_loss": True,
    "torch.nn.functional.l1_loss": True, "torch.nn.functional.cross_entropy": True,
    "torch.nn.functional.nll_loss": True, "torch.nn.functional.binary_cross_entropy": True,
    "torch.nn.functional.binary_cross_entropy_with_logits": True,
    "torch.nn.functional.smooth_l1_loss": True, "torch.nn.functional.kl_div": True,
    "torch.nn.functional.normalize": True, "torch.nn.functional.layer_norm": True,
    "torch.nn.functional.embedding": True, "torch.nn.functional.cosine_similarity": True,
}

# Differentiable Tensor methods -> whether their backward node saves tensors.
TENSOR_METHODS = {
    "add": False, "sub": False, "neg": False, "sum": False, "mean": False, "view": False,
    "view_as": False, "reshape": False, "flatten": False, "squeeze": False, "unsqueeze": False,
    "t": False, "T": False, "transpose": False, "permute": False, "clone": False,
    "contiguous": False, "expand": False, "expand_as": False, "repeat": False,
    "to": False, "cpu": False, "cuda": False, "float": False, "double": False, "half": False,
    "type_as": False, "chunk": False, "split": False, "narrow": False,
    "mul": True, "div": True, "mm": True, "matmul": True, "bmm": True, "exp": True,
    "log": True, "pow": True, "sqrt": True, "sin": True, "cos": True, "tanh": True,
    "sigmoid": True, "relu": True, "abs": True, "softmax": True, "log_softmax": True,
    "norm": True, "max": True, "min": True, "prod": True, "clamp": True, "square": True,
}

# Tensor attributes that are themselves differentiable views (no saved tensors).
TENSOR_ATTRIBUTE_VIEWS = {"T": False, "mT": False, "real": False, "imag": False}

# Python operators on tensors (ast operator class name) -> whether the node saves tensors.
OPERATORS = {
    "Add": False, "Sub": False, "USub": False, "UAdd": False,
    "Mult": True, "Div": True, "MatMult": True, "Pow": True, "FloorDiv": False, "Mod": False,
}

# Indexing: basic slices save nothing; advanced indexing with a tensor saves the indices.
SUBSCRIPT_SAVES = {"basic": False, "advanced": True}

# Tensor methods and attributes whose result carries no graph.
SEVER_METHODS = frozenset({"detach", "item", "tolist", "numpy", "argmax", "argmin", "size",
                           "dim", "numel", "long", "int", "bool", "eq", "ne", "gt", "lt", "ge",
                           "le", "nonzero", "sign", "round", "floor", "ceil"})
SEVER_ATTRIBUTES = frozenset({"data", "shape", "dtype", "device", "grad", "requires_grad",
                              "is_leaf", "grad_fn", "ndim"})
# In-place method that detaches the tensor itself.
DETACH_IN_PLACE = frozenset({"detach_"})
# ``t.requires_grad_(flag)``: makes a leaf require grad (flag defaults to True).
REQUIRES_GRAD_SETTER = "requires_grad_"

# Calls that run backward and free the graph they walk unless retain_graph/create_graph is true.
#   arg: position of the tensor(s) whose graph is walked; None means the receiver (t.backward()).
#   retain_pos: positional index of retain_graph, if any.
BACKWARD_CALLS = {
    "Tensor.backward": {"tensors": None, "retain_pos": 1, "create_pos": 2},
    "torch.autograd.backward": {"tensors": 0, "retain_pos": 2, "create_pos": 3},
    "torch.autograd.grad": {"tensors": 0, "retain_pos": 3, "create_pos": 4},
}

# Context managers / decorators that switch graph recording.
GRAD_MODE = {
    "torch.no_grad": False,
    "torch.inference_mode": False,
    "torch.enable_grad": True,
    "torch.set_grad_enabled": "arg0",  # follows its first argument
    "torch.autograd.no_grad": False,
    "torch.autograd.enable_grad": True,
    "torch.autograd.set_grad_enabled": "arg0",
}

# nn.Module classes: has trainable parameters, whether its forward saves tensors, what it returns
# ("tensor" or "output_and_hidden" for recurrent layers).
MODULES = {
    "torch.nn.Linear": {"params": True, "saves": True},
    "torch.nn.Bilinear": {"params": True, "saves": True},
    "torch.nn.Conv1d": {"params": True, "saves": True},
    "torch.nn.Conv2d": {"params": True, "saves": True},
    "torch.nn.Conv3d": {"params": True, "saves": True},
    "torch.nn.ConvTranspose2d": {"params": True, "saves": True},
    "torch.nn.Embedding": {"params": True, "saves": True},
    "torch.nn.BatchNorm1d": {"params": True, "saves": True},
    "torch.nn.BatchNorm2d": {"params": True, "saves": True},
    "torch.nn.LayerNorm": {"params": True, "saves": True},
    "torch.nn.GroupNorm": {"params": True, "saves": True},
    "torch.nn.RNN": {"params": True, "saves": True, "returns": "output_and_hidden"},
    "torch.nn.LSTM": {"params": True, "saves": True, "returns": "output_and_hidden"},
    "torch.nn.GRU": {"params": True, "saves": True, "returns": "output_and_hidden"},
    "torch.nn.RNNCell": {"params": True, "saves": True},
    "torch.nn.GRUCell": {"params": True, "saves": True},
    "torch.nn.LSTMCell": {"params": True, "saves": True, "returns": "tuple"},
    "torch.nn.MultiheadAttention": {"params": True, "saves": True, "returns": "tuple"},
    "torch.nn.ReLU": {"params": False, "saves": True},
    "torch.nn.LeakyReLU": {"params": False, "saves": True},
    "torch.nn.GELU": {"params": False, "saves": True},
    "torch.nn.SiLU": {"params": False, "saves": True},
    "torch.nn.Sigmoid": {"params": False, "saves": True},
    "torch.nn.Tanh": {"params": False, "saves": True},
    "torch.nn.Softmax": {"params": False, "saves": True},
    "torch.nn.LogSoftmax": {"params": False, "saves": True},
    "torch.nn.Dropout": {"params": False, "saves": True},
    "torch.nn.MaxPool2d": {"params": False, "saves": True},
    "torch.nn.AvgPool2d": {"params": False, "saves": False},
    "torch.nn.Flatten": {"params": False, "saves": False},
    "torch.nn.Identity": {"params": False, "saves": False},
    "torch.nn.MSELoss": {"params": False, "saves": True},
    "torch.nn.L1Loss": {"params": False, "saves": True},
    "torch.nn.CrossEntropyLoss": {"params": False, "saves": True},
    "torch.nn.NLLLoss": {"params": False, "saves": True},
    "torch.nn.BCELoss": {"params": False, "saves": True},
    "torch.nn.BCEWithLogitsLoss": {"params": False, "saves": True},
    "torch.nn.SmoothL1Loss": {"params": False, "saves": True},
    "torch.nn.KLDivLoss": {"params": False, "saves": True},
    "torch.nn.HuberLoss": {"params": False, "saves": True},
}

# Containers of modules: calling one runs its children in order.
MODULE_CONTAINERS = frozenset({"torch.nn.Sequential"})

# Base classes that make a user class an nn.Module (calling an instance runs ``forward``).
MODULE_BASES = frozenset({"torch.nn.Module"})

# Module methods.
MODULE_PARAMETER_METHODS = frozenset({"parameters", "named_parameters"})  # yield the parameters
MODULE_SELF_METHODS = frozenset({"train", "eval", "to", "cuda", "cpu", "float", "double",
                                 "requires_grad_", "half"})  # return the module itself

# Optimizers: ``step()`` updates the parameters in place (this matters for retain_graph fixes).
OPTIMIZER_PREFIXES = ("torch.optim.",)
OPTIMIZER_STEP_METHODS = frozenset({"step"})

# Tensor methods that modify the receiver in place (a trailing underscore is the convention).
def is_in_place_method(name: str) -> bool:
    return name.endswith("_") and not name.startswith("_")
