"""What GradGuard knows about the torch API, declared as data (the engine holds no torch names).

Every claim about whether an op saves tensors for backward is checked against real torch by
``tests/test_torch_api.py``: an op that saves tensors raises "backward through the graph a
second time" when its graph is walked twice, one that saves none does not.
(Checked against torch 2.13; an entry added here needs an input recipe in that test.)

Names are fully qualified after import-alias resolution (``F.relu`` -> ``torch.nn.functional.relu``).

A "saves" value is the usual case. Some ops save tensors only for some arguments or modes;
those are noted next to the entry (the test pins each noted case, see SUBTLE_CASES there).
Saving nothing but sizes/scalars (sum, mean, view, cat, to, ...) does not count: only saved
*tensors* are freed by backward and make a second walk raise.
"""

# Calls that create a fresh tensor: a leaf, requiring grad iff ``requires_grad=True`` is passed.
FACTORIES = frozenset({
    "torch.randn", "torch.rand", "torch.randint", "torch.zeros", "torch.ones", "torch.empty",
    "torch.full", "torch.arange", "torch.linspace", "torch.logspace", "torch.eye",
    # torch.normal(0., 1., size=...) is a factory; torch.normal(mean_tensor, std) is NOT: it
    # keeps mean's graph (NormalBackward, zero gradient, saves nothing).
    "torch.normal",
    "torch.randn_like", "torch.rand_like", "torch.zeros_like", "torch.ones_like", "torch.empty_like",
    "torch.full_like", "torch.randint_like",
    # randint/randperm can only require grad with a floating dtype= (int tensors never can).
    "torch.randperm",
    # from_numpy takes no requires_grad: always a leaf that does not require grad.
    "torch.from_numpy",
    # NOTE: torch.as_tensor / torch.asarray are NOT factories: given a tensor they return it
    # (or a differentiable cast of it) with its graph -> see FUNCTIONS.
    # Calls whose result is always fresh and can never carry a graph (integer/bool results,
    # no derivative): leaves that do not require grad, whatever their input.
    "torch.nn.functional.one_hot", "torch.argmax", "torch.argmin", "torch.argsort",
    "torch.multinomial", "torch.bucketize", "torch.searchsorted", "torch.nonzero",
    "torch.isnan", "torch.isinf", "torch.isfinite", "torch.eq", "torch.ne", "torch.gt",
    "torch.lt", "torch.ge", "torch.le", "torch.logical_not", "torch.logical_and",
    "torch.logical_or",
})

# Calls that copy their argument into a new leaf and so sever its graph (torch.tensor(t)).
# NOT here: torch.Tensor(t) / torch.FloatTensor(t) return an *alias* of t that keeps its graph
# (AliasBackward0) -> see FUNCTIONS. torch.LongTensor(t) stays: a long result never requires grad
# (and a float t is refused).
COPY_CONSTRUCTORS = frozenset({
    "torch.tensor", "torch.LongTensor",
    "torch.detach",  # the function form of t.detach(): no copy, but the result has no graph
})

# Calls that make a leaf that requires grad from their first argument.
# (nn.Parameter(x * 2) is a leaf too: Parameter detaches its data.)
PARAMETERS = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter"})

# Differentiable torch functions -> whether their backward node saves tensors.
FUNCTIONS = {
    # no saved tensors
    "torch.add": False, "torch.sub": False, "torch.subtract": False, "torch.neg": False,
    "torch.sum": False, "torch.cat": False, "torch.concat": False, "torch.concatenate": False,
    "torch.stack": False, "torch.flatten": False,
    "torch.reshape": False, "torch.squeeze": False, "torch.unsqueeze": False,
    "torch.transpose": False, "torch.t": False, "torch.clone": False, "torch.chunk": False,
    "torch.split": False, "torch.narrow": False, "torch.permute": False,
    "torch.mean": False,  # saves only sizes (with or without dim)
    "torch.cumsum": False, "torch.trace": False, "torch.diagonal": False, "torch.diag": False,
    "torch.triu": False, "torch.tril": False, "torch.roll": False, "torch.flip": False,
    "torch.movedim": False, "torch.swapaxes": False, "torch.unbind": False,
    "torch.broadcast_to": False, "torch.tile": False, "torch.select": False,
    # repeat_interleave(x, int) is a view/expand (False); with a repeats *tensor* it is an
    # index_select that saves the index (True).
    "torch.repeat_interleave": False,
    # lerp(start, end, float) saves nothing; with a weight *tensor* it saves it (True).
    "torch.lerp": False,
    # sign/round/floor/ceil are differentiable (zero gradient, saves nothing): their result
    # still requires grad and carries the input's graph, so they do not sever it.
    "torch.sign": False, "torch.round": False, "torch.floor": False, "torch.ceil": False,
    # Given a tensor these return it (same object, or a ToCopy cast) with its graph.
    # (asarray: since torch 2.1x requires_grad defaults to the input's; older torch detached.)
    "torch.as_tensor": False, "torch.asarray": False,
    # Legacy constructors given a tensor return an alias that keeps its graph (AliasBackward0).
    "torch.Tensor": False, "torch.FloatTensor": False, "torch.DoubleTensor": False,
    "torch.HalfTensor": False, "torch.BFloat16Tensor": False,
    # pad: mode="constant" (the default); reflect/replicate/circular save the input (True).
    "torch.nn.functional.pad": False,
    # interpolate nearest/bilinear/bicubic save only sizes; mode="area" is adaptive_avg_pool (True).
    "torch.nn.functional.interpolate": False,
    "torch.nn.functional.pixel_shuffle": False,
    # saved tensors
    # dropout in training (the default) saves its mask; training=False or p=0 returns the input
    # unchanged (no node at all).
    "torch.nn.functional.dropout": True, "torch.nn.functional.dropout2d": True,
    # mul/div save the *other* operand, even a python scalar (it is wrapped into a tensor):
    # torch.mul(x, 2) and x / 2 raise on a second backward.
    "torch.mul": True, "torch.multiply": True, "torch.div": True, "torch.divide": True,
    "torch.true_divide": True,
    "torch.mm": True, "torch.matmul": True, "torch.bmm": True, "torch.addmm": True,
    "torch.baddbmm": True, "torch.mv": True, "torch.dot": True, "torch.outer": True,
    "torch.tensordot": True,
    "torch.einsum": True,  # with one operand ("ij->ji") it is a permute and saves nothing
    "torch.exp": True, "torch.log": True,
    "torch.pow": True,  # any exponent, even x ** 1 or x ** 0 (PowBackward saves self)
    "torch.sqrt": True, "torch.rsqrt": True, "torch.sin": True, "torch.cos": True,
    "torch.tanh": True, "torch.log1p": True, "torch.expm1": True, "torch.reciprocal": True,
    "torch.erf": True, "torch.atan2": True,
    "torch.sigmoid": True, "torch.relu": True, "torch.abs": True,
    "torch.softmax": True, "torch.log_softmax": True,  # save their result
    "torch.logsumexp": True,
    "torch.norm": True, "torch.linalg.norm": True, "torch.linalg.vector_norm": True,
    "torch.max": True, "torch.min": True,  # max(x) saves x and result; max(x, dim) the indices
    "torch.maximum": True, "torch.minimum": True, "torch.amax": True, "torch.amin": True,
    "torch.sort": True, "torch.topk": True,  # save the indices
    "torch.std": True, "torch.var": True, "torch.cumprod": True,
    "torch.prod": True,
    "torch.where": True,  # saves the condition (also where(c, x, 0.))
    "torch.clamp": True, "torch.clip": True,  # clamp(x, 0, 1), clamp(min=0), clamp(max=..) save x
    "torch.square": True,
    "torch.gather": True, "torch.scatter": True, "torch.index_select": True,  # save the index
    "torch.masked_fill": True, "torch.masked_select": True,  # save the mask
    "torch.addcmul": True,  # saves t1/t2 only when the *other* one needs grad (addcmul(x, c1, c2): False)
    "torch.cdist": True, "torch.nan_to_num": True,
    "torch.nn.functional.relu": True, "torch.nn.functional.leaky_relu": True,
    "torch.nn.functional.gelu": True, "torch.nn.functional.silu": True,
    "torch.nn.functional.elu": True, "torch.nn.functional.relu6": True,
    "torch.nn.functional.hardtanh": True, "torch.nn.functional.softplus": True,
    "torch.nn.functional.mish": True, "torch.nn.functional.hardswish": True,
    "torch.nn.functional.logsigmoid": True, "torch.nn.functional.glu": True,
    "torch.nn.functional.sigmoid": True, "torch.nn.functional.tanh": True,
    "torch.nn.functional.softmax": True, "torch.nn.functional.log_softmax": True,
    "torch.nn.functional.gumbel_softmax": True,
    "torch.nn.functional.linear": True,  # with or without bias (mm saves both operands)
    "torch.nn.functional.conv1d": True,
    "torch.nn.functional.conv2d": True, "torch.nn.functional.conv_transpose2d": True,
    "torch.nn.functional.max_pool2d": True,
    "torch.nn.functional.avg_pool2d": True,  # saves its input (for the shape)
    "torch.nn.functional.adaptive_avg_pool2d": True,  # output_size 1 becomes a mean (False)
    "torch.nn.functional.mse_loss": True,
    "torch.nn.functional.l1_loss": True, "torch.nn.functional.cross_entropy": True,
    "torch.nn.functional.nll_loss": True, "torch.nn.functional.binary_cross_entropy": True,
    "torch.nn.functional.binary_cross_entropy_with_logits": True,
    "torch.nn.functional.smooth_l1_loss": True, "torch.nn.functional.huber_loss": True,
    "torch.nn.functional.kl_div": True,
    "torch.nn.functional.normalize": True, "torch.nn.functional.layer_norm": True,
    "torch.nn.functional.batch_norm": True,  # training and eval (eval saves input and running stats)
    "torch.nn.functional.group_norm": True, "torch.nn.functional.instance_norm": True,
    "torch.nn.functional.embedding": True, "torch.nn.functional.cosine_similarity": True,
    "torch.nn.functional.scaled_dot_product_attention": True,
}

# Differentiable Tensor methods -> whether their backward node saves tensors.
# (``T`` is not here: it is a property, not a method -> TENSOR_ATTRIBUTE_VIEWS.)
TENSOR_METHODS = {
    "add": False, "sub": False, "neg": False, "sum": False, "mean": False, "view": False,
    "view_as": False, "reshape": False, "flatten": False, "squeeze": False, "unsqueeze": False,
    "t": False, "transpose": False, "permute": False, "clone": False,
    "contiguous": False, "expand": False, "expand_as": False, "repeat": False,
    # to/cpu/float/...: ToCopyBackward saves only dtype/device; when nothing changes they return
    # the tensor itself (no node).
    "to": False, "cpu": False, "cuda": False, "float": False, "double": False, "half": False,
    "bfloat16": False,
    "type_as": False, "chunk": False, "split": False, "narrow": False,
    "unflatten": False, "select": False, "unbind": False, "flip": False, "roll": False,
    "diagonal": False, "movedim": False, "swapaxes": False, "tile": False, "unfold": False,
    "cumsum": False, "triu": False, "tril": False,
    "repeat_interleave": False,  # int repeats; a repeats tensor saves it
    "lerp": False,  # float weight; a weight tensor is saved
    # differentiable with zero gradient: the result keeps the graph (they do not sever it)
    "sign": False, "round": False, "floor": False, "ceil": False,
    "mul": True, "div": True, "mm": True, "matmul": True, "bmm": True, "exp": True,
    "log": True, "pow": True, "sqrt": True, "sin": True, "cos": True, "tanh": True,
    "sigmoid": True, "relu": True, "abs": True, "softmax": True, "log_softmax": True,
    "norm": True, "max": True, "min": True, "prod": True, "clamp": True, "square": True,
    "clip": True, "rsqrt": True, "log1p": True, "reciprocal": True, "logsumexp": True,
    "std": True, "var": True, "cumprod": True, "amax": True, "amin": True,
    "sort": True, "topk": True, "gather": True, "scatter": True, "index_select": True,
    "masked_fill": True, "masked_select": True, "where": True, "mv": True, "dot": True,
    "outer": True, "nan_to_num": True, "maximum": True, "minimum": True,
}

# Tensor attributes that are themselves differentiable views (no saved tensors).
# x.T on a 2-D tensor is a permute (PermuteBackward0, saves nothing). ``real``/``imag`` of a
# complex tensor are views; ``x.real`` of a real tensor is x itself, ``x.imag`` of one raises.
TENSOR_ATTRIBUTE_VIEWS = {"T": False, "mT": False, "H": False, "mH": False,
                          "real": False, "imag": False}

# Python operators on tensors (ast operator class name) -> whether the node saves tensors.
OPERATORS = {
    # x + 1, 1 - x, -x, +x save nothing (+x returns x itself).
    "Add": False, "Sub": False, "USub": False, "UAdd": False,
    # x * 2 and x / 2 DO save: the python scalar is wrapped into a tensor that is saved.
    # 2 / x becomes reciprocal * 2 (saves), 2 ** x saves its result, x ** 2 / x ** 1 save x.
    "Mult": True, "Div": True, "MatMult": True, "Pow": True,
    # x // y has no derivative at all: the result requires grad but the first backward raises
    # "derivative for aten::floor_divide is not implemented" (so never a second-time error).
    "FloorDiv": False,
    # x % 2 and x % c save nothing; x % y saves both when y requires grad (True).
    "Mod": False,
}

# Indexing: basic slices save nothing; advanced indexing with a tensor saves the indices.
# basic: x[1:3], x[0], x[..., 1], x[None], x[:, 1:2]  (Slice/Select/Unsqueeze, no tensors)
# advanced: x[idx_tensor], x[[0, 2]], x[bool_mask], x[x > 0]  (IndexBackward0 saves the indices)
SUBSCRIPT_SAVES = {"basic": False, "advanced": True}

# Tensor methods and attributes whose result carries no graph.
# (numpy() on a tensor that requires grad refuses outright: RuntimeError "Can't call numpy()".)
# NOT here: sign/round/floor/ceil -- they are differentiable (zero gradient) and keep the graph.
SEVER_METHODS = frozenset({"detach", "item", "tolist", "numpy", "argmax", "argmin", "size",
                           "dim", "numel", "long", "int", "bool", "eq", "ne", "gt", "lt", "ge",
                           "le", "nonzero", "argsort", "isnan", "isinf", "isfinite", "any", "all",
                           "logical_not", "short", "byte", "equal", "allclose", "isclose",
                           "is_contiguous", "is_floating_point", "stride", "count_nonzero",
                           # fresh tensors like the receiver, without its graph
                           # (new_tensor(t) copies t detached, with a warning)
                           "new_zeros", "new_ones", "new_empty", "new_full", "new_tensor"})
# Of those, the ones whose result holds the receiver's values, only cut from its graph (a fix
# may take them away).
DETACHES = frozenset({"detach"})
# The class every tensor (parameters included) is an instance of, for ``isinstance`` checks.
TENSOR_CLASSES = frozenset({"torch.Tensor"})

# Converters that, given data that is not a tensor (lists, NumPy arrays, numbers, whatever a
# third-party library returned), make a fresh leaf that does not require grad. Given a tensor
# they keep its graph (FUNCTIONS).
DATA_CONVERTERS = frozenset({"torch.as_tensor", "torch.asarray", "torch.Tensor", "torch.FloatTensor",
                             "torch.DoubleTensor", "torch.HalfTensor", "torch.BFloat16Tensor"})
# Data loaders whose batches, with the default collate in the main process, stack the items the
# dataset gives (``dataset[i]``) keeping their graphs. Only these keywords leave that so: workers
# pickle the items (a non-leaf that requires grad is refused), a collate_fn may do anything.
DATA_LOADERS = frozenset({"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"})
DATA_LOADER_KEYWORDS = ("dataset", "batch_size", "shuffle")  # in this order, also positional
DATA_LOADER_ORDER_KEYWORDS = frozenset({"sampler", "drop_last", "generator"})  # which items, in what order
DATA_LOADER_DEFAULTS = (("num_workers", 0), ("pin_memory", False),
                        ("persistent_workers", False))  # given with these values, nothing changes
# Datasets whose items are the rows of the tensors they were given (``(x[i], y[i])``).
TENSOR_DATASETS = frozenset({"torch.utils.data.TensorDataset", "torch.utils.data.dataset.TensorDataset"})
# Methods of torch.distributions objects (modelled as the tensors of their parameters) that draw
# without grad: only rsample() is differentiable. No torch.Tensor method has these names.
SAMPLE_METHODS = frozenset({"sample", "sample_n"})
SEVER_ATTRIBUTES = frozenset({"data", "shape", "dtype", "device", "grad", "requires_grad",
                              "is_leaf", "grad_fn", "ndim", "is_cuda", "layout", "nbytes",
                              "itemsize"})
# Tensor methods that register a hook and return its handle (nothing of the graph changes now).
TENSOR_HOOK_METHODS = frozenset({"register_hook"})
# Of those, the tensor's own memory without its graph (``.data``): never requires grad.
DETACHED_ATTRIBUTES = frozenset({"data"})
# In-place method that detaches the tensor itself (refused on a view: "Can't detach views in-place").
DETACH_IN_PLACE = frozenset({"detach_"})
# The keyword of factories (and the attribute of tensors) that says whether a leaf requires grad.
REQUIRES_GRAD = "requires_grad"
# The root package of the library: its names are looked up in these tables, never imported.
TORCH = "torch"
# The method a call of a module instance runs.
MODULE_FORWARD = "forward"
# ``t.requires_grad_(flag)``: makes a leaf require grad (flag defaults to True).
# (On a non-leaf, requires_grad_(False) raises; requires_grad_() is a no-op.)
REQUIRES_GRAD_SETTER = "requires_grad_"

# Calls that run backward and free the graph they walk unless retain_graph/create_graph is true.
#   tensors: position of the tensor(s) whose graph is walked; None means the receiver (t.backward()).
#   retain_pos / create_pos: positional index of retain_graph / create_graph.
#   returns: "grads" when the call returns the gradients (a tuple, one per input); else None.
# (positions count the arguments after the receiver: t.backward(gradient, retain_graph,
# create_graph); create_graph=True also retains the graph: retain_graph defaults to create_graph.)
# ``inputs``: the tensors gradients are asked for; the call runs (and frees) only the part of
# the graph between the outputs and them.
# ``gradient``: the position and keyword of the gradient of the outputs; without it torch makes
# ones, which it can only do for outputs of one element.
BACKWARD_CALLS = {
    "Tensor.backward": {"tensors": None, "retain_pos": 1, "create_pos": 2, "inputs_pos": 3,
                        "gradient": (0, "gradient")},
    "torch.autograd.backward": {"tensors": 0, "retain_pos": 2, "create_pos": 3, "inputs_pos": 5,
                                "gradient": (1, "grad_tensors"), "tensors_kw": "tensors"},
    "torch.autograd.grad": {"tensors": 0, "retain_pos": 3, "create_pos": 4, "inputs_pos": 1,
                            "returns": "grads", "gradient": (2, "grad_outputs"), "tensors_kw": "outputs"},
}
# The keywords of those calls (their positions are above).
RETAIN_GRAPH, CREATE_GRAPH, INPUTS = "retain_graph", "create_graph", "inputs"

# Context managers / decorators that switch graph recording; GRAD_MODE_KEYWORD names their flag.
GRAD_MODE_KEYWORD = "mode"
# All work as ``with X():``, ``@X()``; no_grad/enable_grad/inference_mode also as a bare ``@X``.
GRAD_MODE = {
    "torch.no_grad": False,
    # inference_mode(mode=True) turns recording off; inference_mode(False) turns it *on*
    # ("not_arg0": the opposite of its argument ``mode``, off without one).
    "torch.inference_mode": "not_arg0",
    "torch.enable_grad": True,
    # set_grad_enabled follows its first argument; unlike the others, a bare call
    # ``torch.set_grad_enabled(False)`` (no ``with``) switches the mode until changed again.
    "torch.set_grad_enabled": "arg0",
    "torch.autograd.no_grad": False,
    "torch.autograd.enable_grad": True,
    "torch.autograd.set_grad_enabled": "arg0",
    "torch.autograd.inference_mode": "not_arg0",
    "torch.autograd.grad_mode.no_grad": False,
    "torch.autograd.grad_mode.enable_grad": True,
    "torch.autograd.grad_mode.set_grad_enabled": "arg0",
    "torch.autograd.grad_mode.inference_mode": "not_arg0",
}

# nn.Module classes: has trainable parameters, whether its forward saves tensors, what it returns
# ("tensor" or "output_and_hidden" for recurrent layers).
#   returns: absent means "tensor"; "output_and_hidden" is (output, h) (RNN, GRU);
#     "output_and_hidden_pair" is (output, (h, c)) (LSTM); "tuple" is a plain tuple of tensors
#     (LSTMCell's (h, c), MultiheadAttention's (output, weights)).
#   params: for the default constructor arguments (affine=False etc. noted where they matter).
#   saves: for the default train() mode.
MODULES = {
    "torch.nn.Linear": {"params": True, "saves": True},  # bias=False too (mm saves input and weight)
    "torch.nn.Bilinear": {"params": True, "saves": True},
    "torch.nn.Conv1d": {"params": True, "saves": True},
    "torch.nn.Conv2d": {"params": True, "saves": True},
    "torch.nn.Conv3d": {"params": True, "saves": True},
    "torch.nn.ConvTranspose1d": {"params": True, "saves": True},
    "torch.nn.ConvTranspose2d": {"params": True, "saves": True},
    "torch.nn.Embedding": {"params": True, "saves": True},  # saves the indices
    "torch.nn.EmbeddingBag": {"params": True, "saves": True},
    # BatchNorm saves in train and in eval mode (eval: input, weight, running stats);
    # affine=False removes the parameters, not the saving.
    "torch.nn.BatchNorm1d": {"params": True, "saves": True},
    "torch.nn.BatchNorm2d": {"params": True, "saves": True},
    "torch.nn.BatchNorm3d": {"params": True, "saves": True},
    "torch.nn.LayerNorm": {"params": True, "saves": True},
    "torch.nn.GroupNorm": {"params": True, "saves": True},
    # InstanceNorm defaults to affine=False: no parameters
    "torch.nn.InstanceNorm1d": {"params": False, "saves": True},
    "torch.nn.InstanceNorm2d": {"params": False, "saves": True},
    "torch.nn.RNN": {"params": True, "saves": True, "returns": "output_and_hidden"},
    "torch.nn.LSTM": {"params": True, "saves": True, "returns": "output_and_hidden_pair"},  # (out, (h, c))
    "torch.nn.GRU": {"params": True, "saves": True, "returns": "output_and_hidden"},
    "torch.nn.RNNCell": {"params": True, "saves": True},
    "torch.nn.GRUCell": {"params": True, "saves": True},
    "torch.nn.LSTMCell": {"params": True, "saves": True, "returns": "tuple"},
    "torch.nn.MultiheadAttention": {"params": True, "saves": True, "returns": "tuple"},
    "torch.nn.TransformerEncoderLayer": {"params": True, "saves": True},
    "torch.nn.TransformerDecoderLayer": {"params": True, "saves": True},
    "torch.nn.TransformerEncoder": {"params": True, "saves": True},
    "torch.nn.TransformerDecoder": {"params": True, "saves": True},
    "torch.nn.Transformer": {"params": True, "saves": True},
    "torch.nn.PReLU": {"params": True, "saves": True},
    # ReLU(inplace=True) on a leaf that requires grad is refused (in-place on a leaf).
    "torch.nn.ReLU": {"params": False, "saves": True},
    "torch.nn.ReLU6": {"params": False, "saves": True},
    "torch.nn.LeakyReLU": {"params": False, "saves": True},
    "torch.nn.ELU": {"params": False, "saves": True},
    "torch.nn.GELU": {"params": False, "saves": True},
    "torch.nn.SiLU": {"params": False, "saves": True},
    "torch.nn.Mish": {"params": False, "saves": True},
    "torch.nn.Hardswish": {"params": False, "saves": True},
    "torch.nn.Hardtanh": {"params": False, "saves": True},
    "torch.nn.Softplus": {"params": False, "saves": True},
    "torch.nn.GLU": {"params": False, "saves": True},
    "torch.nn.Sigmoid": {"params": False, "saves": True},
    "torch.nn.Tanh": {"params": False, "saves": True},
    "torch.nn.Softmax": {"params": False, "saves": True},
    "torch.nn.LogSoftmax": {"params": False, "saves": True},
    # Dropout saves its mask in train mode; in eval() (or p=0) it returns the input: no node.
    "torch.nn.Dropout": {"params": False, "saves": True},
    "torch.nn.Dropout1d": {"params": False, "saves": True},
    "torch.nn.Dropout2d": {"params": False, "saves": True},
    "torch.nn.MaxPool1d": {"params": False, "saves": True},
    "torch.nn.MaxPool2d": {"params": False, "saves": True},  # saves input and indices
    "torch.nn.MaxPool3d": {"params": False, "saves": True},
    "torch.nn.AvgPool1d": {"params": False, "saves": True},
    # AvgPool2d DOES save: avg_pool2d's backward node keeps its input (AvgPool2DBackward0).
    "torch.nn.AvgPool2d": {"params": False, "saves": True},
    # AdaptiveAvgPool2d saves its input, except output_size 1 (1, (1, 1)), which is a mean (no save).
    "torch.nn.AdaptiveAvgPool1d": {"params": False, "saves": True},
    "torch.nn.AdaptiveAvgPool2d": {"params": False, "saves": True},
    "torch.nn.AdaptiveMaxPool2d": {"params": False, "saves": True},
    "torch.nn.Upsample": {"params": False, "saves": False},  # nearest/bilinear save only sizes
    "torch.nn.ZeroPad2d": {"params": False, "saves": False},
    "torch.nn.ConstantPad2d": {"params": False, "saves": False},
    "torch.nn.ReflectionPad2d": {"params": False, "saves": True},
    "torch.nn.ReplicationPad2d": {"params": False, "saves": True},
    "torch.nn.PixelShuffle": {"params": False, "saves": False},
    "torch.nn.Flatten": {"params": False, "saves": False},
    "torch.nn.Unflatten": {"params": False, "saves": False},
    "torch.nn.Identity": {"params": False, "saves": False},  # returns its input itself
    "torch.nn.CosineSimilarity": {"params": False, "saves": True},
    "torch.nn.PairwiseDistance": {"params": False, "saves": True},
    "torch.nn.MSELoss": {"params": False, "saves": True},
    "torch.nn.L1Loss": {"params": False, "saves": True},
    "torch.nn.CrossEntropyLoss": {"params": False, "saves": True},
    "torch.nn.NLLLoss": {"params": False, "saves": True},
    "torch.nn.BCELoss": {"params": False, "saves": True},
    "torch.nn.BCEWithLogitsLoss": {"params": False, "saves": True},
    "torch.nn.SmoothL1Loss": {"params": False, "saves": True},
    "torch.nn.KLDivLoss": {"params": False, "saves": True},
    "torch.nn.HuberLoss": {"params": False, "saves": True},
    "torch.nn.MarginRankingLoss": {"params": False, "saves": True},
    "torch.nn.TripletMarginLoss": {"params": False, "saves": True},
    "torch.nn.CosineEmbeddingLoss": {"params": False, "saves": True},
    "torch.nn.GaussianNLLLoss": {"params": False, "saves": True},
    "torch.nn.PoissonNLLLoss": {"params": False, "saves": True},
    "torch.nn.SoftMarginLoss": {"params": False, "saves": True},
    "torch.nn.MultiLabelSoftMarginLoss": {"params": False, "saves": True},
    "torch.nn.CTCLoss": {"params": False, "saves": True},
}

# Containers of modules: calling one runs its children in order.
# (ModuleList / ModuleDict are not callable: they only hold modules.)
MODULE_CONTAINERS = frozenset({"torch.nn.Sequential"})

# Base classes that make a user class an nn.Module (calling an instance runs ``forward``).
MODULE_BASES = frozenset({"torch.nn.Module"})

# Module methods.
# parameters() yields the Parameters; named_parameters() yields (name, Parameter) pairs.
MODULE_PARAMETER_METHODS = frozenset({"parameters", "named_parameters"})  # yield the parameters
MODULE_NAMED_METHODS = frozenset({"named_parameters"})  # of those, the ones yielding (name, Parameter)
# Module methods that register a hook called with (module, inputs, output) after each forward.
MODULE_FORWARD_HOOKS = frozenset({"register_forward_hook"})
# ``self.register_buffer("mean", t)``: the module's attribute ``mean`` is now ``t`` itself
MODULE_REGISTERS = frozenset({"register_buffer", "register_parameter"})
MODULE_SELF_METHODS = frozenset({"train", "eval", "to", "cuda", "cpu", "float", "double",
                                 "requires_grad_", "half", "bfloat16", "type", "apply",
                                 "share_memory"})  # return the module itself

# Optimizers: ``step()`` updates the parameters in place (this matters for retain_graph fixes).
# Caution: the prefix also matches torch.optim.lr_scheduler.* (whose step() changes only the
# learning rate, not the parameters) and torch.optim.swa_utils.*.
OPTIMIZER_PREFIXES = ("torch.optim.",)
# under that prefix but no optimizer: a scheduler's step() leaves the parameters alone
NOT_OPTIMIZER_PREFIXES = ("torch.optim.lr_scheduler.",)
OPTIMIZER_STEP_METHODS = frozenset({"step"})

# Tensor methods that modify the receiver in place (a trailing underscore is the convention).
# (It also matches requires_grad_ and detach_, which change flags rather than data; see
# REQUIRES_GRAD_SETTER and DETACH_IN_PLACE.)
def is_in_place_method(name: str) -> bool:
    return name.endswith("_") and not name.startswith("_")


# --- added by the engine's owner (lead) ---
# Library calls that copy their argument: a copied module has parameters of its own.
# NOT copy.copy: a shallow copy of a module shares its _parameters dict, so copy.copy(m).weight
# is m.weight. (Tensors: copy.copy(t) and copy.deepcopy(leaf) give a new leaf, requiring grad
# like t, without t's graph; copy.deepcopy(non-leaf) raises "Only Tensors created explicitly by
# the user (graph leaves) support the deepcopy protocol".)
COPIES = frozenset({"copy.deepcopy"})

# Fields of the named tuples that max/min/sort/topk/median return: True = carries the graph.
# (Also kthvalue, mode, cummax, cummin, and max/min with a dim; aminmax's fields are min/max.)
RESULT_FIELDS = {"values": True, "indices": False}

# Modules that only hold other modules: iterating one yields its children.
# NOT ModuleDict: iterating it yields its *keys* (strings); its .values() yields the children.
# (Holders have no forward: calling one raises NotImplementedError.)
MODULE_HOLDERS = frozenset({"torch.nn.ModuleList"})

# Optimizers whose step(closure) evaluates the closure more than once (so a loss built outside
# the closure is backwarded again).
OPTIMIZER_REPEATS_CLOSURE = frozenset({"torch.optim.LBFGS"})

# Severing methods whose result is a Python value (a number, a list, an array), not a tensor.
PYTHON_VALUE_METHODS = frozenset({"item", "tolist", "numpy", "size", "dim", "numel"})

# Attributes of built-in layers that are their parameters (requires_grad leaves).
MODULE_PARAMETER_ATTRIBUTES = frozenset({"weight", "bias"})

# Conversions to NumPy: they raise "Can't call numpy() on Tensor that requires grad" on a
# tensor that requires grad. NumPy functions convert their tensor arguments, and the tensors in
# a list argument, through Tensor.__array__ (which calls numpy()): value True. The reductions
# (value False) convert lists only: given one tensor they call its own method (np.mean(t)
# calls t.mean(axis=...), a TypeError), and np.concatenate/np.stack want a sequence.
TO_NUMPY_METHODS = frozenset({"numpy"})
NUMPY_CONVERTERS = {
    "numpy.array": True, "numpy.asarray": True, "numpy.argmax": True, "numpy.argmin": True,
    "numpy.median": True, "numpy.tanh": True, "numpy.exp": True, "numpy.log": True,
    "numpy.abs": True, "numpy.sqrt": True, "numpy.vstack": True, "numpy.hstack": True,
    "numpy.round": True, "numpy.clip": True,
    "numpy.mean": False, "numpy.sum": False, "numpy.std": False, "numpy.var": False,
    "numpy.max": False, "numpy.min": False, "numpy.concatenate": False, "numpy.stack": False,
}

# The gradient a backward leaves on a leaf; on a non-leaf it stays None (with a UserWarning)
# unless retain_grad() was called on it first.
GRAD_ATTRIBUTE = "grad"
RETAIN_GRAD = "retain_grad"

# --- shapes: only as far as "one element or not" (a backward without a gradient argument needs
# exactly one element: "grad can be implicitly created only for scalar outputs"). Each entry is
# checked against torch by tests/test_shapes.py. A kind is a rule of gradguard/shapes.py:
#   same: the input's shape; broadcast: the broadcast of the tensor and number arguments;
#   reduce: no dim -> one element, dim (and keepdim) -> that dim removed (kept as 1);
#   spread: std/var, like reduce, but the third argument is ``unbiased`` and keepdim the fourth;
#   reverse: x.T (every dim reversed); swap_last: x.mT (the last two swapped);
#   whole: one element when called on the tensor alone (max(x)); max(x, dim) is not followed;
#   norm: like reduce, but the dim is the third argument (p comes first);
#   view / flatten / unsqueeze / squeeze / transpose / matmul / stack: as those ops do.
# Ops not listed here give a shape nothing is known of.
_SAME_FUNCTIONS = ("neg", "exp", "log", "sqrt", "rsqrt", "sin", "cos", "tanh", "log1p", "expm1",
                   "reciprocal", "erf", "sigmoid", "relu", "abs", "square", "sign", "round",
                   "floor", "ceil", "clone", "nan_to_num", "softmax", "log_softmax")
_ACTIVATIONS = ("relu", "leaky_relu", "gelu", "silu", "elu", "relu6", "hardtanh", "softplus",
                "mish", "hardswish", "logsigmoid", "sigmoid", "tanh", "softmax", "log_softmax",
                "dropout", "normalize")
SHAPE_FUNCTIONS = {
    **{f"torch.{n}": "same" for n in _SAME_FUNCTIONS},
    **{f"torch.nn.functional.{n}": "same" for n in _ACTIVATIONS},
    **{f"torch.{n}": "broadcast" for n in ("add", "sub", "subtract", "mul", "multiply", "div",
                                           "divide", "true_divide", "pow", "atan2", "maximum",
                                           "minimum", "clamp", "clip")},
    **{f"torch.{n}": "reduce" for n in ("sum", "mean", "prod", "logsumexp", "amax", "amin")},
    "torch.std": "spread", "torch.var": "spread",
    "torch.max": "whole", "torch.min": "whole", "torch.norm": "norm",
    "torch.flatten": "flatten", "torch.reshape": "view", "torch.unsqueeze": "unsqueeze",
    "torch.squeeze": "squeeze", "torch.transpose": "transpose", "torch.t": "transpose",
    "torch.matmul": "matmul", "torch.mm": "matmul", "torch.stack": "stack",
}
SHAPE_METHODS = {
    **{n: "same" for n in _SAME_FUNCTIONS + ("contiguous", "float", "double", "half", "cpu",
                                              "detach")},
    **{n: "broadcast" for n in ("add", "sub", "mul", "div", "pow", "maximum", "minimum",
                                "clamp", "clip")},
    **{n: "reduce" for n in ("sum", "mean", "prod", "logsumexp", "amax", "amin")},
    "std": "spread", "var": "spread",
    "max": "whole", "min": "whole", "norm": "norm",
    "view": "view", "reshape": "view", "flatten": "flatten", "unsqueeze": "unsqueeze",
    "squeeze": "squeeze", "transpose": "transpose", "t": "transpose", "matmul": "matmul",
    "mm": "matmul",
}
del _SAME_FUNCTIONS, _ACTIVATIONS  # spelled out in the two tables above
SHAPE_ATTRIBUTES = {"T": "reverse", "mT": "swap_last"}
SHAPE_OPERATORS = {**{op: "broadcast" for op in ("Add", "Sub", "Mult", "Div", "Pow", "Mod",
                                                   "FloorDiv")},
                   "USub": "same", "UAdd": "same", "MatMult": "matmul"}
# Factories: sizes: torch.zeros(2, 3) / torch.zeros((2, 3)) / size=; full: full(size, value);
# randint: the size is its last positional argument or size=; steps: linspace(start, end,
# steps); eye: (n, m=n); like: its first argument's; literal: torch.tensor of literal data.
FACTORY_SHAPES = {
    **{f"torch.{n}": "sizes" for n in ("randn", "rand", "zeros", "ones", "empty")},
    "torch.full": "full", "torch.randint": "randint", "torch.linspace": "steps",
    "torch.logspace": "steps", "torch.eye": "eye",
    **{f"torch.{n}_like": "like" for n in ("randn", "rand", "zeros", "ones", "empty", "full",
                                           "randint")},
    "torch.tensor": "literal", "torch.detach": "like",
    "torch.nn.Parameter": "like", "torch.nn.parameter.Parameter": "like",
}
# Loss functions: with reduction "mean" (the default) or "sum" one element; with "none" one
# value per element (elementwise: the broadcast of input and target) or per sample (class: the
# input without its class dimension 1). The number is how many leading positional arguments
# leave the reduction as given by keyword (beyond it, a positional size_average/reduce/
# reduction may change it, and nothing is claimed).
LOSS_SHAPES = {
    **{f"torch.nn.functional.{n}": ("elementwise", 2) for n in ("mse_loss", "l1_loss",
                                                                "smooth_l1_loss", "huber_loss",
                                                                "kl_div")},
    **{f"torch.nn.functional.{n}": ("elementwise", 3) for n in ("binary_cross_entropy",
                                                                "binary_cross_entropy_with_logits")},
    **{f"torch.nn.functional.{n}": ("class", 3) for n in ("cross_entropy", "nll_loss")},
    **{f"torch.nn.{n}": ("elementwise", 0) for n in ("MSELoss", "L1Loss", "SmoothL1Loss",
                                                     "HuberLoss", "KLDivLoss")},
    **{f"torch.nn.{n}": ("elementwise", 1) for n in ("BCELoss", "BCEWithLogitsLoss")},
    **{f"torch.nn.{n}": ("class", 1) for n in ("CrossEntropyLoss", "NLLLoss")},
}
# Modules: same (the input's shape), linear (the last dim becomes the constructor's
# out_features, its 2nd argument), flatten (nn.Flatten(start_dim=1, end_dim=-1)).
MODULE_SHAPES = {
    **{f"torch.nn.{n}": "same" for n in ("ReLU", "ReLU6", "LeakyReLU", "ELU", "GELU", "SiLU",
                                         "Mish", "Hardswish", "Hardtanh", "Softplus", "Sigmoid",
                                         "Tanh", "Softmax", "LogSoftmax", "Dropout", "Identity",
                                         "LayerNorm", "BatchNorm1d", "BatchNorm2d", "PReLU")},
    "torch.nn.Linear": "linear", "torch.nn.Flatten": "flatten",
}

# --- what a node keeps: which of its tensors an op's backward node saves, for the ops followed
# this far. A saved tensor modified in place before that backward makes it raise "one of the
# variables needed for gradient computation has been modified by an inplace operation" (GG103).
#   result: its output; self: its first tensor argument (a method's receiver);
#   each_other: each of its two operands, saved when the *other* one requires grad (x * w saves
#   x for w's gradient; x * 2 saves nothing of x). Checked by tests/test_saved.py.
_KEEP_RESULT = ("exp", "sigmoid", "tanh", "softmax", "log_softmax", "relu", "sqrt")
_KEEP_SELF = ("log", "sin", "cos", "abs", "log1p")
KEEPS_FUNCTIONS = {
    **{f"torch.{n}": "result" for n in _KEEP_RESULT},
    **{f"torch.nn.functional.{n}": "result" for n in ("relu", "sigmoid", "tanh", "softmax", "log_softmax")},
    **{f"torch.{n}": "self" for n in _KEEP_SELF},
    **{f"torch.{n}": "each_other" for n in ("mul", "matmul", "mm")},
    "torch.nn.functional.linear": "each_other",
}
KEEPS_METHODS = {**{n: "result" for n in _KEEP_RESULT}, **{n: "self" for n in _KEEP_SELF},
                 **{n: "each_other" for n in ("mul", "matmul", "mm")}}
del _KEEP_RESULT, _KEEP_SELF  # spelled out in the tables above
KEEPS_OPERATORS = {"Mult": "each_other", "MatMult": "each_other"}
# a module's operands are its input and its weight
KEEPS_MODULES = {"torch.nn.Linear": "each_other", "torch.nn.ReLU": "result", "torch.nn.Sigmoid": "result",
                 "torch.nn.Tanh": "result", "torch.nn.Softmax": "result", "torch.nn.LogSoftmax": "result"}
# Modules that, built with this flag (keyword, position) true, write their output into their input.
IN_PLACE_MODULES = {"torch.nn.ReLU": ("inplace", 0), "torch.nn.ReLU6": ("inplace", 0),
                    "torch.nn.LeakyReLU": ("inplace", 1), "torch.nn.ELU": ("inplace", 1),
                    "torch.nn.SiLU": ("inplace", 0), "torch.nn.Dropout": ("inplace", 1)}

# Python operators that make running totals (``total += loss``, ``avg = 0.9 * avg + 0.1 * loss``):
# AddBackward / SubBackward keep both operands' graphs alive in the result.
ACCUMULATING_OPERATORS = frozenset({"Add", "Sub"})

# Methods of optimizers and modules that clear their parameters' .grad (set to None by default).
GRAD_RESET_METHODS = frozenset({"zero_grad"})
# In-place methods that, called on a parameter's .grad (``p.grad.zero_()``), clear it.
GRAD_TENSOR_RESETS = frozenset({"zero_"})
