"""gradguard.hover: Markdown/plain rendering of the engine's facts, and the facts of a long chain (no server involved)."""
from __future__ import annotations

from gradguard.analysis import analyze_source
from gradguard.findings import BackwardFact, GraphStep, Location, TensorFact
from gradguard.hover import (MAX_ITEMS, fact_hover, rule_doc_url, rule_hover, suppressed_code_at,
                             tensor_hover)


def loc(line, cell=None):
    return Location("/p/t.py", line, 1, line, 5, cell)


def link(location):
    return "file:///p/t.py"


STEPS = (GraphStep(loc(6), "Y = torch.mm(X, true_W) + true_b", True),
         GraphStep(loc(9), "Z = Y.view(-1)", False))
TENSOR = TensorFact(loc(12), "Z", "yes", False, ("true_W (line 4)",), STEPS, (loc(11),))
BACKWARD = BackwardFact(loc(11), "l.backward()", False, STEPS, (loc(14),), True)


def test_tensor_hover_markdown_links_each_step_and_says_freed():
    text = tensor_hover(TENSOR, "en", True, link)
    assert "**`Z`**" in text and "requires grad: yes" in text and "non-leaf" in text
    assert "`true_W` (line 4)" in text
    assert "[line 6](file:///p/t.py#L6) `Y = torch.mm(X, true_W) + true_b` (saves tensors)" in text
    assert "(saves no tensors)" in text
    assert "**Freed here** by the backward on [line 11](file:///p/t.py#L11)" in text
    named = tensor_hover(TENSOR, "en", True, link, text=lambda _loc: "l.backward()")
    assert "**Freed here** by `l.backward()` on [line 11](file:///p/t.py#L11)" in named
    assert len(text.splitlines()) <= 10


def test_tensor_hover_plain_and_chinese():
    plain = tensor_hover(TENSOR, "en", False, link)
    assert "`" not in plain and "**" not in plain and "](" not in plain
    zh = tensor_hover(TENSOR, "zh-cn", True, link)
    assert "需要梯度: 是" in zh and "`true_W` (第 4 行)" in zh and "此处计算图已被释放" in zh


def test_tensor_without_grad_is_one_short_statement():
    fact = TensorFact(loc(3), "X", "no", True, (), (), ())
    assert fact_hover(fact, "en").endswith("No graph: backward never reaches it.")


def test_long_chains_are_cut():
    steps = tuple(GraphStep(loc(i), f"h{i} = f(h{i - 1})", True) for i in range(1, 12))
    text = tensor_hover(TensorFact(loc(20), "h", "yes", False, (), steps, ()), "en", True, link)
    assert text.count("\n- ") == MAX_ITEMS + 1 and "and 6 more" in text


def test_backward_hover_says_what_it_frees_and_who_reuses_it():
    text = fact_hover(BACKWARD, "en", True, link)
    assert text.startswith("**`l.backward()`**")
    assert "Frees the saved tensors of:" in text and "[line 14](file:///p/t.py#L14)" in text
    assert "retain_graph=True" in text
    zh = fact_hover(BACKWARD, "zh-cn", True, link)
    assert "释放以下步骤保存的张量" in zh and "第 14 行" in zh
    retained = BackwardFact(loc(11), "l.backward(retain_graph=True)", True, STEPS, (), False)
    assert "not needed" in fact_hover(retained, "en")


def test_cells_are_named_without_links():
    fact = TensorFact(loc(2, cell=3), "y", "yes", False, (), (GraphStep(loc(1, cell=1), "h = f(w)", True),), ())
    assert "cell 1, line 1" in tensor_hover(fact, "en", True, lambda _l: None)


def test_rule_codes_in_suppression_comments():
    line = "loss.backward()  # gradguard: ignore[GG101, GG102]"
    start = line.index("GG102")
    assert suppressed_code_at(line, start + 1) == ("GG102", start + 1, start + 6)
    assert suppressed_code_at(line, line.index("GG101") + 3)[0] == "GG101"
    assert suppressed_code_at(line, 3) is None
    text = rule_hover("GG101", "en")
    assert text.startswith("**GG101** · backward-through-freed-graph")
    assert "docs/rules/GG101.md" in text
    assert "文档" in rule_hover("GG101", "zh-cn")
    assert rule_hover("GG999", "en") is None


def test_rule_doc_url_points_into_this_checkout():
    url = rule_doc_url("GG102")
    assert url.startswith("file://") and url.endswith("/docs/rules/GG102.md")


def test_hover_on_a_long_method_chain_does_not_recurse():
    """Hover texts come from the source: ast.unparse recursed once per link and ran out of stack."""
    chain = "".join(f".mul({i})" for i in range(400))
    source = ("import torch\nw = torch.randn(3, requires_grad=True)\n"
              f"y = w{chain}\nl = y.sum()\nl.backward()\nl.backward()\n")
    analysis = analyze_source(source, "/tmp/chain.py", "/tmp", facts=True)
    tensor, backward = analysis.fact_at(4, 1), analysis.fact_at(6, 3)
    assert tensor.name == "l" and any(step.text.startswith("y = w.mul(0).mul(1)") for step in tensor.chain)
    assert all(len(step.text) <= 80 for step in tensor.chain)
    assert backward.call == "l.backward()"
    assert "y = w.mul(0)" in fact_hover(tensor) and fact_hover(backward).startswith("**`l.backward()`**")
