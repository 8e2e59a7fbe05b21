"""GG102: backward() through a graph again where it saves no tensors (no error; gradients accumulate twice).

Decided by the engine's graph-lifetime bookkeeping (``Engine.reuse``); explained and fixed in
:mod:`gradguard.causes`."""
from . import Rule

RULE = Rule(
    code="GG102",
    name="repeated-backward-no-saved-tensors",
    severity="warning",
    summary={
        "en": "backward() walks the same graph again; it does not raise because the graph "
              "saves no tensors, but gradients are accumulated twice",
        "zh-cn": "backward() 再次经过同一计算图；由于图中没有保存张量所以不会报错，但梯度会被累加两次",
    },
    message={
        "en": "{call} walks the graph of {what} (line {built_line}) again after {freed_call} "
              "on line {freed_line}{when}; it does not raise because that graph saves no "
              "tensors, but the gradients of {origin} are accumulated twice",
        "zh-cn": "{call} 在{freed_where_zh}的 {freed_call} 之后{when_zh}再次经过 {what}"
                 "（{built_where_zh}）的计算图；由于该图没有保存张量所以不会报错，但 {origin_zh} "
                 "的梯度会被累加两次",
    },
    fix_help={
        "en": "detach the shared part or compute it under `torch.no_grad()` if its gradient should "
              "count once; keep it if accumulating twice is intended.",
        "zh-cn": "如果共享部分的梯度只应计算一次，用 `.detach()` 或在 `torch.no_grad()` 下计算它；"
                 "若确实需要累加两次，可保留。",
    },
)
