"""What GradGuard knows about the torch API, declared as data (the engine holds no torch names).

Every claim about whether an op saves tensors for backward is checked against real torch by
``tests/test_torch_api.py``: an op that saves tensors raises "backward through the graph a
second time" when its graph is walked twice, one that saves none does not.
(Checked against torch 2.13.)

The facts about what torch ops save, keep and return are generated from torch itself (see
``torchdata/generate.py``) and read from ``torchdata/api.json``; what is written here by hand is
what cannot be generated: Python-level semantics (factories, optimizers, modules' structure,
grad modes, data loading) and shapes.

Names are fully qualified after import-alias resolution (``F.relu`` -> ``torch.nn.functional.relu``).

A "saves" value is the usual case. Some ops save tensors only for some arguments or modes;
those are noted at the generated tables (the test pins each noted case, see SUBTLE_CASES there).
Saving nothing but sizes/scalars (sum, mean, view, cat, to, ...) does not count: only saved
*tensors* are freed by backward and make a second walk raise.
"""
import json
from pathlib import Path

# The facts generated from torch (see the tables marked so below).
_generated = json.loads((Path(__file__).resolve().parent / "torchdata" / "api.json").read_text(encoding="utf-8"))

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
}) | {  # generated: legacy torch.autograd.Variable(t) is an alias of t without its graph
    name for name, e in _generated["functions"].items() if not e["graph"]}

# Containers of parameters that a module holding them registers (``module.parameters()`` yields
# them): a list and a dict of their parameters.
PARAMETER_CONTAINERS = {"torch.nn.ParameterList": "list", "torch.nn.modules.container.ParameterList": "list",
                        "torch.nn.ParameterDict": "dict", "torch.nn.modules.container.ParameterDict": "dict"}

# Classes that no tensor's ``type()`` is, whatever made it (``type(h) == Variable`` is False since
# torch 0.4, although ``isinstance(h, Variable)`` is True).
NEVER_A_TENSOR_TYPE = frozenset({"torch.autograd.Variable", "torch.autograd.variable.Variable"})

# Calls that make a leaf that requires grad from their first argument.
# (nn.Parameter(x * 2) is a leaf too: Parameter detaches its data.)
PARAMETERS = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter"})

# --- generated from torch (torchdata/api.json, written by ``python -m gradguard.torchdata.generate``
# from running each name on tensors that require grad): the canonical call of each name, the one
# verdicts are about. Forms that behave otherwise are pinned in tests/test_torch_api.py
# (SUBTLE_CASES): mul/div save even a python scalar operand (x * 2 raises on a second backward);
# lerp with a float weight and repeat_interleave with int repeats save nothing (a tensor weight or
# repeats is saved); pad saves nothing with mode="constant" (reflect/replicate save the input);
# interpolate nearest/bilinear/bicubic save only sizes (mode="area" saves); adaptive_avg_pool2d
# with output size 1 is a mean (saves nothing); einsum of one operand is a permute; addcmul saves
# t1/t2 only when the other one needs grad; max(x) saves x and its result, max(x, dim) the
# indices; dropout with training=False or p=0 returns its input (no node); to()/float()/... that
# change nothing return the tensor itself; sign/round/floor/ceil have a zero gradient but keep the
# graph; x // y has no derivative (its first backward raises).

# Differentiable torch functions -> whether their backward node saves tensors (only saved
# *tensors* count: they are what backward frees and a second walk misses; sizes and scalars not).
FUNCTIONS = {name: e["saves"] for name, e in _generated["functions"].items() if e["graph"]}
# Differentiable Tensor methods -> whether their backward node saves tensors.
# (``T`` is not here: it is a property, not a method -> TENSOR_ATTRIBUTE_VIEWS.)
TENSOR_METHODS = {name: e["saves"] for name, e in _generated["methods"].items()}
# Tensor attributes that are themselves differentiable views (x.T is a permute). ``real``/``imag``
# of a complex tensor are views; ``x.real`` of a real tensor is x itself, ``x.imag`` of one raises.
TENSOR_ATTRIBUTE_VIEWS = {name: e["saves"] for name, e in _generated["attributes"].items()}
# Python operators on tensors (ast operator class name) -> whether the node saves tensors.
OPERATORS = {name: e["saves"] for name, e in _generated["operators"].items()}
# Indexing: basic (x[1:3], x[0], x[..., 1], x[None]) or advanced (with a tensor, a list, a mask).
SUBSCRIPT_SAVES = {name: e["saves"] for name, e in _generated["subscripts"].items()}

# Layers whose forward returns its input itself (``nn.Identity``): the same tensor, its memory
# and graph, no node of its own.
IDENTITY_MODULES = frozenset(name for name, e in _generated["modules"].items() if e["identity"])
# ``nn.Module``'s dict of its submodules by name (``self._modules["gcl_0"]``)
MODULE_DICT_ATTRIBUTE = "_modules"
# Functions that reparametrize a module's weight and return that same module: its weight is a
# function of parameters of their own, recomputed by each forward (``weight_orig / sigma``),
# whose node saves them whatever the input (an optimizer step between two backwards spoils it).
RETURNS_ITS_MODULE = frozenset({"torch.nn.utils.weight_norm", "torch.nn.utils.spectral_norm",
                                "torch.nn.utils.parametrizations.weight_norm",
                                "torch.nn.utils.parametrizations.spectral_norm"})

# Tensor methods whose tensor arguments lend only their dtype, device or shape: the result
# carries the receiver's graph, never theirs (``(x > 0).type_as(w)``, ``y.view_as(w)``).
LIKE_METHODS = frozenset({"type_as", "to", "expand_as", "view_as", "reshape_as"})

# Tensor methods and attributes whose result carries no graph.
# (numpy() on a tensor that requires grad refuses outright: RuntimeError "Can't call numpy()".)
# NOT here: sign/round/floor/ceil -- they are differentiable (zero gradient) and keep the graph.
SEVER_METHODS = frozenset({"detach", "item", "tolist", "numpy", "argmax", "argmin", "size", "nelement",
                           "element_size",
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
# Data loaders whose batches, with the default collate, stack the items the dataset gives
# (``dataset[i]``), keeping their graphs in the main process. Only these keywords leave that so:
# a collate_fn or a batch_sampler may do anything.
DATA_LOADERS = frozenset({"torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader"})
DATA_LOADER_KEYWORDS = ("dataset", "batch_size", "shuffle")  # in this order, also positional
DATA_LOADER_ORDER_KEYWORDS = frozenset({"sampler", "drop_last", "generator"})  # which items, in what order
# Where and how the batches are made: items that carry no graph come out the same; with worker
# processes, an item that carries a graph is refused (it cannot be sent between processes).
DATA_LOADER_WORKER_KEYWORDS = frozenset({"num_workers", "pin_memory", "persistent_workers", "prefetch_factor",
                                         "timeout", "worker_init_fn", "multiprocessing_context",
                                         "pin_memory_device", "in_order"})
# Datasets whose items are the rows of the tensors they were given (``(x[i], y[i])``).
TENSOR_DATASETS = frozenset({"torch.utils.data.TensorDataset", "torch.utils.data.dataset.TensorDataset"})
# A project's optimizer class derives from these (``class SAM(torch.optim.Optimizer)``):
# ``super().__init__(params, defaults)`` makes its parameter groups, ``param_groups`` a list of
# dicts whose "params" are the parameters (of an optimizer of torch's too).
OPTIMIZER_BASES = frozenset({"torch.optim.Optimizer", "torch.optim.optimizer.Optimizer"})
PARAM_GROUPS, GROUP_PARAMS = "param_groups", "params"
# AMP's loss scalers: ``scale(loss)`` is the loss times a scale that needs no grad (the loss
# itself when the scaler is disabled, as without CUDA), ``step(optimizer)`` is the optimizer's
# step (skipped only when a gradient is inf or nan), the rest touch no graph.
GRAD_SCALERS = frozenset({"torch.amp.GradScaler", "torch.amp.grad_scaler.GradScaler", "torch.cuda.amp.GradScaler",
                          "torch.cuda.amp.grad_scaler.GradScaler", "torch.cpu.amp.GradScaler",
                          "torch.cpu.amp.grad_scaler.GradScaler"})
GRAD_SCALER_SCALE, GRAD_SCALER_STEP = "scale", "step"
# Layers made from a given weight: ``nn.Embedding.from_pretrained(w, freeze=True)``, the weight a
# parameter, frozen unless ``freeze`` (the argument after it) is False.
PRETRAINED_LAYERS = {"torch.nn.Embedding.from_pretrained": "torch.nn.Embedding",
                     "torch.nn.modules.sparse.Embedding.from_pretrained": "torch.nn.Embedding",
                     "torch.nn.EmbeddingBag.from_pretrained": "torch.nn.EmbeddingBag",
                     "torch.nn.modules.sparse.EmbeddingBag.from_pretrained": "torch.nn.EmbeddingBag"}
PRETRAINED_FREEZE = "freeze"
# What every ``nn.Module`` instance has (its class's members, what ``Module.__init__`` sets).
MODULE_MEMBERS = frozenset(_generated["module_members"])
# Distributions that, built from a parameter (keyword: its position), compute from it a node that
# saves tensors and that all their methods share (``Bernoulli(probs)``: the logits, taken once;
# ``Categorical(logits)``: normalised once): a second ``log_prob`` backward meets it freed.
DISTRIBUTION_SHARED_NODES = {name: {p: pos for p, (pos, shared) in params.items() if shared}
                             for name, params in _generated["distributions"].items()
                             if any(shared for _, shared in params.values())}
# Attributes of a distribution that are one of its parameters itself, when it was given
# (``Normal(loc, scale).mean`` is ``loc``), or that attribute of a wrapped distribution
# (``Independent(base, 1).mean`` is ``base.mean``): attribute -> ((parameter, position,
# attribute of it or None), ...).
DISTRIBUTION_ATTRIBUTES = {name: {attr: tuple((entry[0], entry[1], entry[2] if len(entry) > 2 else None)
                                              for entry in params) for attr, params in attrs.items()}
                           for name, attrs in _generated["distribution_attributes"].items()}
# Methods of torch.distributions objects (modelled as the tensors of their parameters) that draw
# without grad: only rsample() is differentiable. No torch.Tensor method has these names.
SAMPLE_METHODS = frozenset({"sample", "sample_n"})
SEVER_ATTRIBUTES = frozenset({"data", "shape", "dtype", "device", "grad", "requires_grad",
                              "is_leaf", "grad_fn", "ndim", "is_cuda", "layout", "nbytes",
                              "itemsize"})


def tensor_has(name: str) -> bool:
    """Whether every tensor has the attribute ``name`` (``hasattr(x, "item")``), as the tables
    know: False means not known, not absent."""
    return name in TENSOR_METHODS or name in SEVER_METHODS or name in SEVER_ATTRIBUTES \
        or name in TENSOR_ATTRIBUTE_VIEWS


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
# Packages of torch's that are never analysed from source, even where a project holds them (the
# functorch repository itself): their transforms run in C++ and rebind a module's state in ways
# the analysis does not follow, so a call into them is unknown.
OPAQUE_PACKAGES = frozenset({"functorch"})
# Python's own modules whose functions return numbers (floats, ints, bools), never a tensor,
# even of a one-element tensor that requires grad (``math.exp(t)`` converts it first); but the
# product of the items it is given, which may be tensors.
NUMBER_MODULES = frozenset({"math"})
NUMBER_MODULES_EXCEPT = frozenset({"math.prod"})
# The method a call of a module instance runs.
MODULE_FORWARD = "forward"
# ``t.requires_grad_(flag)``: makes a leaf require grad (flag defaults to True).
# (On a non-leaf, requires_grad_(False) raises; requires_grad_() is a no-op.)
REQUIRES_GRAD_SETTER = "requires_grad_"
IN_PLACE_ATTRIBUTE = "inplace"  # a layer of IN_PLACE_MODULES switched after it was built

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
# ``parameters``: every parameter the call takes, in order (after the receiver): any other
# keyword is a TypeError (old code's ``retain_variables=True`` stops the program there).
BACKWARD_CALLS = {
    "Tensor.backward": {"tensors": None, "retain_pos": 1, "create_pos": 2, "inputs_pos": 3,
                        "gradient": (0, "gradient"),
                        "parameters": ("gradient", "retain_graph", "create_graph", "inputs")},
    "torch.autograd.backward": {"tensors": 0, "retain_pos": 2, "create_pos": 3, "inputs_pos": 5,
                                "gradient": (1, "grad_tensors"), "tensors_kw": "tensors",
                                "parameters": ("tensors", "grad_tensors", "retain_graph", "create_graph",
                                               "grad_variables", "inputs")},
    "torch.autograd.grad": {"tensors": 0, "retain_pos": 3, "create_pos": 4, "inputs_pos": 1,
                            "returns": "grads", "gradient": (2, "grad_outputs"), "tensors_kw": "outputs",
                            "parameters": ("outputs", "inputs", "grad_outputs", "retain_graph", "create_graph",
                                           "only_inputs", "allow_unused", "is_grads_batched",
                                           "materialize_grads")},
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
# Functions that read the ``.grad`` of the tensors they are given (position, keyword): the
# parameters whose gradients they clip.
# (``clip_grad_value_`` of tensors without a gradient raises instead, in torch 2.13.)
GRAD_READERS = {name: (0, "parameters") for name in (
    "torch.nn.utils.clip_grad_norm_", "torch.nn.utils.clip_grad_norm", "torch.nn.utils.clip_grad.clip_grad_norm_")}
# Context managers within which a saved tensor written in place is copied first (torch keeps the
# original for the backward): such a write spoils nothing.
MUTATION_CONTEXTS = frozenset({"torch.autograd.graph.allow_mutation_on_saved_tensors"})
# Calls that read the mode: whether grad recording is on / inference mode is on.
GRAD_MODE_QUERIES = {"torch.is_grad_enabled": "grad",
                     "torch.is_inference_mode_enabled": "inference"}
# Devices: ``torch.device(...)`` (a context manager too, setting the factories' default), the
# call that sets that default for good, the keyword naming a device, the CPU's name, and the
# tensor methods that move a tensor to a device (returning the tensor itself when it is there).
DEVICE, SET_DEFAULT_DEVICE, DEVICE_KEYWORD, CPU = "torch.device", "torch.set_default_device", "device", "cpu"


class _CpuDevice:
    """The value of ``torch.device("cpu")`` (a constant standing for it: ``str()`` of it is "cpu")."""

    def __str__(self):
        return CPU

    __repr__ = __str__


CPU_DEVICE = _CpuDevice()
MOVE_TO_CPU, MOVE_TO = "cpu", "to"
# Tensor methods whose result may live on another device than the tensor (``type`` too:
# ``x.type(torch.cuda.FloatTensor)``).
DEVICE_METHODS = frozenset({"to", "cuda", "cpu", "type", "xpu", "mps", "ipu", "hpu", "mtia"}) & TENSOR_METHODS.keys()
# Calls that ask whether torch is scripting, tracing, exporting or compiling the code: False in
# the eager run that builds graphs and raises autograd errors (code analysed is called eagerly;
# what ``torch.jit.script``/``torch.onnx.export`` run of it is never followed).
EAGER_QUERIES = frozenset({"torch.onnx.is_in_onnx_export", "torch.jit.is_scripting", "torch.jit.is_tracing",
                           "torch.compiler.is_compiling", "torch.compiler.is_dynamo_compiling",
                           "torch.compiler.is_exporting", "torch._dynamo.is_compiling"})

# nn.Module classes (generated, see above): has trainable parameters, whether its forward saves
# tensors (in train() mode, with the default constructor arguments), what it returns: absent
# means "tensor"; "tuple" a flat tuple of tensors (RNN and GRU's (output, h), LSTMCell's (h, c),
# MultiheadAttention's (output, weights)); "output_and_hidden_pair" is (output, (h, c)) (LSTM).
MODULES = {name: {"params": e["params"], "saves": e["saves"],
                  **({"returns": e["returns"]} if e["returns"] != "tensor" else {}),
                  # a recurrent layer's backward needs the state it was given (h, or (h, c))
                  **({"keeps_state": True} if e["keeps_state"] else {})}
           for name, e in _generated["modules"].items()}
# which of those layers each one is a subclass of (``isinstance(nn.ReLU6(), nn.Hardtanh)``)
LAYER_SUPERCLASSES = {name: frozenset(e["bases"]) for name, e in _generated["modules"].items() if e["bases"]}
# what ``named_parameters()`` names each layer's parameters (its default configuration: a bias
# turned off leaves one name more to the analysis, which only leaves a test on it undecided)
MODULE_PARAMETER_NAMES = {name: tuple(e["param_names"]) for name, e in _generated["modules"].items() if e["param_names"]}

# Containers of modules: calling one runs its children in order.
# (ModuleList / ModuleDict are not callable: they only hold modules.)
MODULE_CONTAINERS = frozenset({"torch.nn.Sequential"})

# Base classes that make a user class an nn.Module (calling an instance runs ``forward``).
# (torch's own bases of its loss modules are modules too: ``class Loss(nn.modules.loss._Loss)``)
MODULE_BASES = frozenset({"torch.nn.Module", "torch.nn.modules.module.Module", "torch.nn.modules.loss._Loss",
                          "torch.nn.modules.loss._WeightedLoss"})
# Base classes of custom autograd functions: ``Cls.apply(*args)`` runs ``Cls.forward(ctx, *args)``
# with grad recording off, and its outputs are one node over the tensor arguments, whose
# backward is the class's; it saves what ``ctx.<SAVE_FOR_BACKWARD>(...)`` was given.
AUTOGRAD_FUNCTION_BASES = frozenset({"torch.autograd.Function", "torch.autograd.function.Function"})
FUNCTION_APPLY = "apply"
SAVE_FOR_BACKWARD = "save_for_backward"
# What a custom backward reads the saved tensors by: torch refuses only that read once they
# were freed (a backward that never reads them runs again)
SAVED_TENSORS = frozenset({"saved_tensors", "saved_variables"})
# Modules that wrap one (its position and keyword) and run it as it is, on one device: the
# graph, the parameters and what a backward frees are the wrapped module's. (On several GPUs,
# DataParallel gathers each replica's outputs: not modelled, as the device count is not known.)
MODULE_WRAPPERS = {name: (0, "module") for name in (
    "torch.nn.DataParallel", "torch.nn.parallel.DataParallel",
    "torch.nn.parallel.DistributedDataParallel", "torch.nn.parallel.distributed.DistributedDataParallel")}

# Module methods.
# parameters() yields the Parameters; named_parameters() yields (name, Parameter) pairs.
MODULE_PARAMETER_METHODS = frozenset({"parameters", "named_parameters"})  # yield the parameters
MODULE_NAMED_METHODS = frozenset({"named_parameters"})  # of those, the ones yielding (name, Parameter)
# Module methods that register a hook called with (module, inputs, output) after each forward.
MODULE_FORWARD_HOOKS = frozenset({"register_forward_hook"})
# ``self.register_buffer("mean", t)``: the module's attribute ``mean`` is now ``t`` itself
# ``nn.ModuleDict(d)``: the modules of the dict ``d`` by key
MODULE_DICT = "torch.nn.ModuleDict"

# torch.nn.utils.rnn: a PackedSequence is no tensor; its ``.data`` is the packed rows, which keep
# the graph (a recurrent layer given one returns one). Makers: where the rows are (an argument's
# position; "items": the rows of a list of tensors).
PACKED_SEQUENCE_MAKERS = {
    "torch.nn.utils.rnn.pack_padded_sequence": 0,
    "torch.nn.utils.rnn.PackedSequence": 0,
    "torch.nn.utils.rnn.pack_sequence": "items",
}
PACKED_SEQUENCE_FIELDS = ("data", "batch_sizes", "sorted_indices", "unsorted_indices")
PAD_PACKED_SEQUENCE = "torch.nn.utils.rnn.pad_packed_sequence"  # (padded rows, lengths)
MODULE_REGISTERS = frozenset({"register_buffer", "register_parameter", "add_module", "register_module"})
REGISTER_BUFFER = "register_buffer"
# buffers() / named_buffers(): the tensors registered with register_buffer, submodules' too
MODULE_BUFFER_METHODS = frozenset({"buffers", "named_buffers"})
MODULE_NAMED_BUFFERS = "named_buffers"
# torch layers that hold buffers of their own (running statistics), from the generated table
LAYERS_WITH_BUFFERS = frozenset(name for name, e in _generated["modules"].items() if e["buffers"])
# Module methods that walk its submodules: (itself first, all the way down, named)
MODULE_WALKS = {"modules": (True, True, False), "named_modules": (True, True, True),
                "children": (False, False, False), "named_children": (False, False, True)}
MODULE_APPLY = "apply"  # fn(m) for every submodule, then the module itself
# copies a state dict into the module's parameters in place (their versions move)
MODULE_LOAD_STATE = "load_state_dict"
# ``module.train(mode=True)`` / ``module.eval()``: set ``training`` on it and every submodule.
MODULE_MODE_METHODS = frozenset({"train", "eval"})
TRAINING_ATTRIBUTE = "training"
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
# (Checked by tests/test_torch_table.py: every ATen in-place operator is named so; of the Tensor
# methods named so that are not ATen operators, the generated ``not_writing`` ones, such as
# share_memory_, change no values and bump no version counter.)
def is_in_place_method(name: str) -> bool:
    return name.endswith("_") and not name.startswith("_") and name not in _not_writing


# --- added by the engine's owner (lead) ---
# Library calls that copy their argument: a copied module has parameters of its own.
# NOT copy.copy: a shallow copy of a module shares its _parameters dict, so copy.copy(m).weight
# is m.weight. (Tensors: copy.copy(t) and copy.deepcopy(leaf) give a new leaf, requiring grad
# like t, without t's graph; copy.deepcopy(non-leaf) raises "Only Tensors created explicitly by
# the user (graph leaves) support the deepcopy protocol".)
COPIES = frozenset({"copy.deepcopy"})
# ... and those that copy only the object: a new object whose attributes are the same values
# (``copy.copy(batch).obs is batch.obs``), a module the same parameters.
SHALLOW_COPIES = frozenset({"copy.copy"})
# Activation checkpointing: ``checkpoint(fn, *args, **kwargs)`` calls ``fn(*args, **kwargs)``
# without the keywords it takes itself. Reentrant (``use_reentrant=True``, and the default when
# it is not given), it runs ``fn`` under no_grad and records a backward only when a tensor
# argument requires grad: the parameters inside ``fn`` do not count.
CHECKPOINTS = {"torch.utils.checkpoint.checkpoint": frozenset({"use_reentrant", "context_fn", "determinism_check",
                                                               "debug", "early_stop", "preserve_rng_state"})}
CHECKPOINT_REENTRANT = "use_reentrant"
# ``torch.is_tensor(x)``: whether x is a tensor (``isinstance(x, torch.Tensor)``)
IS_TENSOR = "torch.is_tensor"

# Fields of the named tuples that max/min/sort/topk/median/kthvalue/mode/cummax/cummin return
# (their ATen operators' outputs, as derivatives.yaml has them): True = carries the graph.
RESULT_FIELDS = _generated["result_fields"]

# Modules that only hold other modules: iterating one yields its children.
# NOT ModuleDict: iterating it yields its *keys* (strings); its .values() yields the children.
# (Holders have no forward: calling one raises NotImplementedError.)
MODULE_HOLDERS = frozenset({"torch.nn.ModuleList"})
# Methods of both that add modules at the end: (the argument holding them, one module or several)
MODULE_ADDERS = {"add_module": (1, False), "register_module": (1, False), "append": (0, False), "extend": (0, True)}

# Optimizers whose step(closure) evaluates the closure more than once (so a loss built outside
# the closure is backwarded again).
OPTIMIZER_REPEATS_CLOSURE = frozenset({"torch.optim.LBFGS"})

# Severing methods whose result is a Python value (a number, a list, an array), not a tensor.
PYTHON_VALUE_METHODS = frozenset({"item", "tolist", "numpy", "size", "dim", "numel", "nelement", "element_size",
                                  "stride"})
NUMBER_METHODS = PYTHON_VALUE_METHODS - {"numpy"}  # Python numbers, no tensor
NUMBER_ATTRIBUTES = frozenset({"shape", "ndim", "nbytes", "itemsize"})
SIZE_METHOD = "size"  # x.size(d): the size of dim d, a number known when the shape is
RANK_METHOD, RANK_ATTRIBUTE = "dim", "ndim"  # x.dim(), x.ndim: known when the rank is
NUMEL_METHODS = frozenset({"numel", "nelement"})  # known when every size is
SHAPE_ATTRIBUTE = "shape"  # x.shape, like x.size(): a tuple of the sizes
# Attributes that are plain values, not tensors (a dtype, a device, a flag).
PLAIN_ATTRIBUTES = frozenset({"dtype", "device", "layout", "is_cuda", "requires_grad", "is_leaf"})
LEAF_ATTRIBUTE = "is_leaf"  # True of a tensor no op that records made: a leaf, or one not requiring grad
NUMBER_BUILTINS = frozenset({"int", "float", "len", "round"})

# Attributes of built-in layers that are their parameters (requires_grad leaves).
MODULE_PARAMETER_ATTRIBUTES = frozenset({"weight", "bias"})

# Conversions to NumPy: they raise "Can't call numpy() on Tensor that requires grad" on a
# tensor that requires grad. NumPy functions convert their tensor arguments, and the tensors in
# a list argument, through Tensor.__array__ (which calls numpy()): value True. The reductions
# (value False) convert lists only: given one tensor they call its own method (np.mean(t)
# calls t.mean(axis=...), a TypeError), and np.concatenate/np.stack want a sequence.
TO_NUMPY_METHODS = frozenset({"numpy"})
NUMPY_CONVERTERS = {
    "numpy.array": True, "numpy.asarray": True, "numpy.copy": True, "numpy.argmax": True, "numpy.argmin": True,
    "numpy.median": True, "numpy.tanh": True, "numpy.exp": True, "numpy.log": True,
    "numpy.abs": True, "numpy.sqrt": True, "numpy.vstack": True, "numpy.hstack": True,
    "numpy.round": True, "numpy.clip": True, "numpy.expand_dims": True, "numpy.transpose": True,
    "numpy.ravel": True, "numpy.tile": True, "numpy.sort": True, "numpy.cumsum": True,
    "numpy.mean": False, "numpy.sum": False, "numpy.std": False, "numpy.var": False,
    "numpy.max": False, "numpy.min": False, "numpy.concatenate": False, "numpy.stack": False,
    **{f"numpy.{n}": True for n in (
        "atleast_1d", "atleast_2d", "atleast_3d", "asanyarray", "ascontiguousarray", "asfortranarray", "fliplr",
        "flipud", "diff", "nan_to_num", "histogram", "percentile", "quantile", "average", "nanmean", "nansum",
        "ptp", "argsort", "unique", "count_nonzero", "cumprod", "maximum", "minimum", "column_stack", "dstack",
        "corrcoef", "cov", "digitize", "gradient", "angle", "zeros_like", "ones_like", "empty_like",
        "full_like", "isclose", "allclose", "float32", "float64", "int64")},
    # (given one tensor these call its own method, or read its shape: lists only)
    **{f"numpy.{n}": False for n in ("squeeze", "array_split", "nonzero", "amax", "amin", "prod", "any", "all")},
    # NumPy's one-argument ufuncs of floats (``np.log10(losses)``): all convert their argument
    **{f"numpy.{n}": True for n in (
        "absolute", "acos", "acosh", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctanh", "asin",
        "asinh", "atan", "atanh", "cbrt", "ceil", "conj", "conjugate", "cos", "cosh", "deg2rad", "degrees",
        "exp2", "expm1", "fabs", "floor", "frexp", "isfinite", "isinf", "isnan", "log10", "log1p", "log2",
        "logical_not", "modf", "negative", "positive", "rad2deg", "radians", "reciprocal", "rint", "sign",
        "signbit", "sin", "sinh", "spacing", "square", "tan", "trunc")},
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
#   gathered: the shape of the ``index`` (x.gather(dim, index));
#   where: the broadcast of its three arguments (``torch.where(cond)`` alone gives index tensors);
#   einsum: each output letter's size in the operands;
#   view / flatten / unsqueeze / squeeze / transpose / matmul / stack: as those ops do.
# same, broadcast and reduce are generated (``shape`` in api.json: the generator runs each
# function and method on tensors of several shapes, one element and 0-dim among them); the rest
# is written here: the kinds the probes do not try, and the same three where the probes' calls do
# not fit (softmax needs its dim, prod and logsumexp take no tuple of dims). Ops not listed give a
# shape nothing is known of.
_SOFTMAXES = ("softmax", "log_softmax")
SHAPE_FUNCTIONS = {
    **{name: e["shape"] for name, e in _generated["functions"].items() if e["shape"]},
    **{f"torch.{n}": "same" for n in _SOFTMAXES},
    **{f"torch.nn.functional.{n}": "same" for n in ("normalize", "instance_norm", "layer_norm", "batch_norm",
                                                    "group_norm")},
    "torch.prod": "reduce", "torch.logsumexp": "reduce",
    "torch.std": "spread", "torch.var": "spread",
    "torch.max": "whole", "torch.min": "whole", "torch.norm": "norm",
    "torch.flatten": "flatten", "torch.reshape": "view", "torch.unsqueeze": "unsqueeze",
    "torch.squeeze": "squeeze", "torch.transpose": "transpose", "torch.t": "transpose",
    "torch.matmul": "matmul", "torch.mm": "matmul", "torch.stack": "stack", "torch.gather": "gathered",
    "torch.cat": "cat", "torch.concat": "cat", "torch.where": "where", "torch.einsum": "einsum",
    # the Fourier transforms: "fft<rank>" keeps each transformed size (or takes ``n``/``s``),
    # "rfft<rank>" halves the last one (n // 2 + 1), "irfft<rank>" makes it 2 (m - 1) or ``n``
    **{f"torch.fft.{pre}fft{rank}": f"{kind}{rank or 1}" for rank in ("", "2", "n")
       for kind, pres in (("fft", ("", "i")), ("rfft", ("r", "ih")), ("irfft", ("ir", "h"))) for pre in pres},
    "torch.fft.fftshift": "same", "torch.fft.ifftshift": "same", "torch.nn.functional.pad": "pad",
    "torch.cdist": "cdist",
    **{f"torch.nn.functional.{kind}_pool{d}d": f"functional_pool{d}" for kind in ("max", "avg") for d in (1, 2, 3)},
    **{f"torch.nn.functional.adaptive_{kind}_pool{d}d": f"functional_adaptive{d}" for kind in ("max", "avg")
       for d in (1, 2, 3)},
}
SHAPE_METHODS = {
    **{name: e["shape"] for name, e in _generated["methods"].items() if e["shape"]},
    **{n: "same" for n in _SOFTMAXES + ("detach", "long", "int", "bool")},
    "gather": "gathered", "masked_fill": "broadcast",
    "prod": "reduce", "logsumexp": "reduce",
    "std": "spread", "var": "spread",
    "max": "whole", "min": "whole", "norm": "norm",
    "view": "view", "reshape": "view", "flatten": "flatten", "unsqueeze": "unsqueeze", "permute": "permute",
    "squeeze": "squeeze", "transpose": "transpose", "t": "transpose", "matmul": "matmul",
    "mm": "matmul", "where": "where",
}
del _SOFTMAXES  # spelled out in the two tables above
SHAPE_ATTRIBUTES = {"T": "reverse", "mT": "swap_last"}
SHAPE_OPERATORS = {**{op: "broadcast" for op in ("Add", "Sub", "Mult", "Div", "Pow", "Mod",
                                                   "FloorDiv")},
                   "USub": "same", "UAdd": "same", "MatMult": "matmul"}
# Factories: sizes: torch.zeros(2, 3) / torch.zeros((2, 3)) / size=; full: full(size, value);
# randint: the size is its last positional argument or size=; steps: linspace(start, end,
# steps); eye: (n, m=n); like: its first argument's; literal: torch.tensor of literal data;
# legacy: literal data given as a list or tuple display, else sizes.
FACTORY_SHAPES = {
    **{f"torch.{n}": "sizes" for n in ("randn", "rand", "zeros", "ones", "empty")},
    "torch.full": "full", "torch.randint": "randint", "torch.linspace": "steps",
    "torch.logspace": "steps", "torch.eye": "eye", "torch.randperm": "count", "torch.arange": "arange",
    **{f"torch.{n}_like": "like" for n in ("randn", "rand", "zeros", "ones", "empty", "full",
                                           "randint")},
    "torch.tensor": "literal", "torch.as_tensor": "literal", "torch.asarray": "literal", "torch.detach": "like",
    # the legacy constructors: literal data (``torch.Tensor([1, 3])``) or sizes (``torch.Tensor(2, 3)``)
    **{f"torch.{n}": "legacy" for n in ("Tensor", "FloatTensor", "DoubleTensor", "HalfTensor",
                                        "BFloat16Tensor", "LongTensor", "IntTensor")},
    "torch.nn.Parameter": "like", "torch.nn.parameter.Parameter": "like",
    "torch.autograd.Variable": "like",  # the legacy wrapper: its argument's data, same shape
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
# out_features, its 2nd argument), flatten (nn.Flatten(start_dim=1, end_dim=-1)), unflatten
# (nn.Unflatten(dim, sizes): that dim becomes the sizes), conv/convT/pool/adaptive (the spatial
# sizes as the constructor's arguments make them), upsample (times an int scale factor).
# Recurrent layers: their constructor's parameters in order (the shapes of their output and
# state follow ``hidden_size``, ``num_layers``, ``batch_first``, ``bidirectional``, ``proj_size``).
RNN_SHAPES = {
    "torch.nn.LSTM": ("input_size", "hidden_size", "num_layers", "bias", "batch_first", "dropout",
                      "bidirectional", "proj_size"),
    "torch.nn.GRU": ("input_size", "hidden_size", "num_layers", "bias", "batch_first", "dropout", "bidirectional"),
    "torch.nn.RNN": ("input_size", "hidden_size", "num_layers", "nonlinearity", "bias", "batch_first", "dropout",
                     "bidirectional"),
}
MODULE_SHAPES = {
    **{f"torch.nn.{n}": "same" for n in ("ReLU", "ReLU6", "LeakyReLU", "ELU", "GELU", "SiLU",
                                         "Mish", "Hardswish", "Hardtanh", "Softplus", "Sigmoid",
                                         "Tanh", "Softmax", "LogSoftmax", "Dropout", "Identity",
                                         "LayerNorm", "BatchNorm1d", "BatchNorm2d", "PReLU", "SELU", "CELU",
                                         "Softsign", "Hardsigmoid", "LogSigmoid", "Softmin", "Tanhshrink",
                                         "AlphaDropout", "RMSNorm", "GroupNorm", "BatchNorm3d",
                                         "InstanceNorm1d", "InstanceNorm2d", "TransformerEncoderLayer")},
    "torch.nn.Linear": "linear", "torch.nn.Flatten": "flatten", "torch.nn.Unflatten": "unflatten",
    **{f"torch.nn.Conv{d}d": f"conv{d}" for d in (1, 2, 3)},
    **{f"torch.nn.ConvTranspose{d}d": f"convT{d}" for d in (1, 2, 3)},
    **{f"torch.nn.{kind}Pool{d}d": f"pool{d}" for kind in ("Max", "Avg") for d in (1, 2, 3)},
    **{f"torch.nn.Adaptive{kind}Pool{d}d": f"adaptive{d}" for kind in ("Max", "Avg") for d in (1, 2, 3)},
    "torch.nn.Upsample": "upsample",
}

# --- what a node keeps (generated, see above): which of its tensors an op's backward node saves,
# for the ops where one of these kinds says exactly which tensors written in place make its
# backward raise "one of the variables needed for gradient computation has been modified by an
# inplace operation" (GG103), in every form the generator tries:
#   result: its output; self: its first tensor argument (a method's receiver); self_result: both
#   (a norm, amax, prod, logsumexp, an LSTM); both: its two operands, whatever requires grad;
#   each_other: each of its two operands, saved when the *other* one requires grad (x * w saves
#   x for w's gradient; x * 2 saves nothing of x). A module's operands are its input and weight.
KEEPS_FUNCTIONS = {name: e["keeps"] for name, e in _generated["functions"].items() if e["keeps"]}
KEEPS_METHODS = {name: e["keeps"] for name, e in _generated["methods"].items() if e["keeps"]}
# In-place forms whose node saves what they wrote, as their out-of-place forms save their result
# (``float_power_`` saves its input instead); tests/test_torch_api.py checks both ways.
IN_PLACE_KEEPS_RESULT = frozenset({"exp_", "exp2_", "expm1_", "reciprocal_", "relu_", "rsqrt_", "sigmoid_", "sqrt_",
                                   "tan_", "tanh_"})
KEEPS_OPERATORS = {name: e["keeps"] for name, e in _generated["operators"].items() if e["keeps"]}
KEEPS_MODULES = {name: e["keeps"] for name, e in _generated["modules"].items() if e["keeps"]}
# Arguments that need no grad but that the node saves all the same (a loss's target, gather's
# indices, masked_fill's mask): written in place before the backward, it raises. Positions in
# the call (a method's ``self`` is 0).
KEPT_ARGUMENTS_FUNCTIONS = {name: tuple(e["kept_arguments"]) for name, e in _generated["functions"].items()
                            if e.get("kept_arguments")}
KEPT_ARGUMENTS_METHODS = {name: tuple(e["kept_arguments"]) for name, e in _generated["methods"].items()
                          if e.get("kept_arguments")}
KEPT_ARGUMENTS_MODULES = {name: tuple(e["kept_arguments"]) for name, e in _generated["modules"].items()
                          if e.get("kept_arguments")}
# Results that are views of an input (torch: they share its version counter, so an in-place
# write through either bumps both): which input, by position. Left out: those the generator saw
# copy when the input is not contiguous (reshape, flatten, ravel), which the analysis cannot tell
# (view and view_as refuse such an input; unflatten stays a view).
_MAY_COPY = frozenset(name for section in ("functions", "methods") for name, e in _generated[section].items()
                      if e["view_of"] is not None and e["view_of_strided"] is None)
VIEW_METHODS = frozenset(name for name, e in _generated["methods"].items()
                         if e["view_of"] == 0 and name not in _MAY_COPY)
# Methods whose result is the receiver's data alone, viewed or copied (``view``, ``reshape``,
# ``expand``): their other arguments are sizes, and add no graph (nor doubt) to the result.
RECEIVER_ONLY_METHODS = frozenset(name for name, e in _generated["methods"].items() if e["view_of"] == 0)
VIEW_FUNCTIONS = {name: e["view_of"] for name, e in _generated["functions"].items()
                  if e["view_of"] is not None and name not in _MAY_COPY}
VIEW_ATTRIBUTES = frozenset(name for name, e in _generated["attributes"].items() if e["view_of"] == 0)
# Views of a contiguous tensor on contiguous input, copies otherwise (reshape, flatten, ravel).
RESHAPES = _MAY_COPY
# Views that keep a contiguous input contiguous; every other view (transpose, permute, expand,
# a slice, ...) may not, and so may what element-wise ops compute from it.
DENSE_VIEWS = frozenset({"view", "view_as", "unsqueeze", "squeeze", "unflatten", "detach", "torch.unsqueeze",
                         "torch.squeeze", "torch.unflatten", "torch.detach"})
DENSE_RESULTS = frozenset({"contiguous"})  # laid out contiguously whatever the input
# Ops returning (values, indices): the indices never require grad. From the table where torch
# always returns both (sort, topk, ...); max/min/median/nanmedian only when given a dim.
SPLIT_OUTPUTS = {**{name: tuple(e["outputs_require_grad"]) for section in ("methods", "functions")
                    for name, e in _generated[section].items()
                    if len(e["outputs_require_grad"] or ()) > 1 and not all(e["outputs_require_grad"])}}
BY_DIM_SPLIT_OUTPUTS = frozenset({"max", "min", "median", "nanmedian", "torch.max", "torch.min", "torch.median",
                                  "torch.nanmedian"})
SPLIT_OUTPUT_NAMES = ("values", "indices")
# Ops that return a tuple of pieces of their input: the kind of cut (``shapes.pieces``), and
# the position (after the tensor) and keyword of its size argument, none for unbind's.
PIECES = {"chunk": ("chunk", 0, "chunks"), "split": ("split", 0, "split_size"), "unbind": ("unbind", None, None),
          "torch.chunk": ("chunk", 0, "chunks"), "torch.split": ("split", 0, "split_size_or_sections"),
          "torch.unbind": ("unbind", None, None)}
# Ops with a fixed number (more than one) of outputs that all require grad (``evals, evecs =
# torch.linalg.eigh(a)``): a tuple of that many, each the one node's output (what it saves of
# them taken as one memory). Not the pieces of a cut, whose number depends on the arguments.
# Ops that return one output per tensor they are given (``yv, xv = torch.meshgrid(ys, xs)``):
# followed as one tensor holding all their graphs (each output a view of its own input).
ONE_OUTPUT_PER_INPUT = frozenset({"torch.meshgrid", "torch.broadcast_tensors"})
MULTI_OUTPUTS = {name: len(e["outputs_require_grad"]) for section in ("methods", "functions")
                 for name, e in _generated[section].items()
                 if len(e["outputs_require_grad"] or ()) > 1 and all(e["outputs_require_grad"])
                 and name.rsplit(".", 1)[-1] not in PIECES and name not in ONE_OUTPUT_PER_INPUT}
VIEW_SUBSCRIPTS = frozenset(kind for kind, e in _generated["subscripts"].items() if e["view_of"] == 0)
# Modules that, built with this flag (keyword, position) true, write their output into their input.
IN_PLACE_MODULES = {name: tuple(e["inplace_flag"]) for name, e in _generated["modules"].items()
                    if e["inplace_flag"]}
# Layers that, built with a ``max_norm`` (keyword, position), rescale the rows they look up of
# their own weight in place in forward (``nn.Embedding``), and functions that do so to their
# weight argument (``F.embedding``: (max_norm position, weight position)): the weight's version
# moves, so a node that saved it (a tied output projection) raises.
RENORM_MODULES = {name: tuple(e["renorm_flag"]) for name, e in _generated["modules"].items() if e["renorm_flag"]}
RENORM_FUNCTIONS = {name: tuple(e["renorm_flag"]) for name, e in _generated["functions"].items()
                    if e["renorm_flag"]}
# Functions that, called with ``inplace=True``, write their result into their first argument
# (``F.relu(x, inplace=True)``): (inplace position, training position or None, training's
# default, position of a ``p`` whose 0 writes nothing or None).
IN_PLACE_FUNCTIONS = {name: tuple(e["inplace_flag"]) for name, e in _generated["functions"].items()
                      if e["inplace_flag"]}
_not_writing = frozenset(_generated["not_writing"])
# Functions that write their first argument as the in-place method of their name does:
# ``torch.relu_(x)`` is ``x.relu_()`` (each ``Tensor(a!) self`` in ATen's schema: tests/test_torch_api.py)
IN_PLACE_METHOD_FUNCTIONS = frozenset("torch." + n for n in """
abs_ acos_ acosh_ addmv_ arccos_ arccosh_ arcsin_ arcsinh_ arctan_ arctanh_ as_strided_ asin_ asinh_
atan_ atanh_ ceil_ clamp_ clamp_max_ clamp_min_ clip_ conj_physical_ cos_ cosh_ deg2rad_ detach_
erf_ erfc_ exp2_ exp_ expm1_ fill_ fix_ floor_ frac_ gcd_ i0_ index_put_ lcm_ ldexp_ log10_ log1p_
log2_ log_ logit_ nan_to_num_ neg_ negative_ rad2deg_ reciprocal_ relu_ resize_as_ round_ rsqrt_
sigmoid_ sin_ sinc_ sinh_ sqrt_ square_ tan_ tanh_ trunc_ xlogy_ zero_
""".split())
# ... and those that are their functional form called with ``inplace=True``: ``F.elu_(x)`` is
# ``F.elu(x, inplace=True)``, ``torch.dropout_(x, p, train)`` is ``F.dropout(x, p, train, True)``
IN_PLACE_FLAG_FUNCTIONS = {
    **{f"torch.nn.functional.{n}_": f"torch.nn.functional.{n}"
       for n in ("celu", "elu", "hardtanh", "leaky_relu", "relu", "selu", "threshold")},
    **{f"torch.{n}_": f"torch.nn.functional.{n}" for n in ("alpha_dropout", "celu", "dropout", "selu", "threshold")},
}
# --- dtypes. Every name of a dtype torch takes (generated): ``torch.long``, ``torch.int64``,
# the tensor types ``torch.LongTensor`` and ``torch.cuda.LongTensor`` (also as the strings
# ``x.type("torch.LongTensor")`` takes), the Python types ``int``, ``float``, ``bool`` -> whether a
# tensor of it can require grad: floating and complex ones can; integer and bool ones cannot
# (``requires_grad`` on one raises "only Tensors of floating point ... can require gradients", and
# a cast to one makes a tensor without graph: ``labels = out.type(torch.LongTensor)``).
DTYPES = _generated["dtypes"]
DTYPE_KEYWORD = "dtype"
# Tensor methods that cast to the dtype an argument names: ``x.to(torch.long)``,
# ``x.to(device, torch.long)``, ``x.to(dtype=...)``, ``x.type(torch.LongTensor)``. Given a
# tensor (``x.to(y)``, ``x.type_as(y)``) they take its dtype. Only ``type`` takes a dtype's name
# as a string (``to`` takes a string as a device).
CAST_METHODS = frozenset({"to", "type", "type_as"})
DTYPE_STRING_METHODS = frozenset({"type"})
# Tensor methods (all severing) and functions (all factories) whose result is of an integer or
# bool dtype whatever they are given (unless a floating ``dtype=``): integer casts, indices,
# comparisons, tests. Checked against torch by tests/test_torch_dtypes.py.
INTEGRAL_METHODS = frozenset({"long", "int", "short", "byte", "bool", "eq", "ne", "gt", "lt", "ge", "le",
                              "argmax", "argmin", "argsort", "nonzero", "isnan", "isinf", "isfinite",
                              "logical_not", "any", "all", "count_nonzero"})
# Of those, the ones that give a bool tensor: as an index it is a mask (``x[x > 0]``).
BOOL_METHODS = frozenset({"bool", "eq", "ne", "gt", "lt", "ge", "le", "isnan", "isinf", "isfinite", "logical_not"})
INTEGRAL_FUNCTIONS = frozenset({"torch.nn.functional.one_hot", "torch.argmax", "torch.argmin", "torch.argsort",
                                "torch.multinomial", "torch.bucketize", "torch.searchsorted", "torch.nonzero",
                                "torch.isnan", "torch.isinf", "torch.isfinite", "torch.eq", "torch.ne",
                                "torch.gt", "torch.lt", "torch.ge", "torch.le", "torch.logical_not",
                                "torch.logical_and", "torch.logical_or", "torch.randint", "torch.randperm"})
# Of those, the ones that give an integer tensor, never a bool one: as an index it picks rows
# (``x[torch.randperm(n)[:b]]`` has b rows), never masks (a uint8 one masks, an int16 one is refused).
INDEX_METHODS = frozenset({"long", "int", "argmax", "argmin", "argsort", "nonzero", "count_nonzero"})
INDEX_FUNCTIONS = frozenset({"torch.nn.functional.one_hot", "torch.argmax", "torch.argmin", "torch.argsort",
                             "torch.multinomial", "torch.bucketize", "torch.searchsorted", "torch.nonzero",
                             "torch.randint", "torch.randperm"})
# Factories whose dtype, without ``dtype=``, follows the Python numbers they are given (at these
# positions): all of them ints or bools make an integer or bool tensor (``torch.tensor([2])``,
# ``torch.arange(5)``, ``torch.full((2,), 3)``); a float among them a floating one.
DATA_TYPED = {"torch.tensor": (0,), "torch.as_tensor": (0,), "torch.asarray": (0,), "torch.arange": (0, 1, 2),
              "torch.full": (1,)}
del _generated  # read once, at import; lookups are the dicts above

# Python operators that make running totals (``total += loss``, ``avg = 0.9 * avg + 0.1 * loss``):
# AddBackward / SubBackward keep both operands' graphs alive in the result.
ACCUMULATING_OPERATORS = frozenset({"Add", "Sub"})

# Methods of optimizers and modules that clear their parameters' .grad (set to None by default).
GRAD_RESET_METHODS = frozenset({"zero_grad"})
SET_TO_NONE = "set_to_none"  # zero_grad's flag (default True since torch 2.0)
# In-place methods that, called on a parameter's .grad (``p.grad.zero_()``), clear it.
GRAD_TENSOR_RESETS = frozenset({"zero_"})
