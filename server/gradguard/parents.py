"""Parent links of a syntax tree, found on demand, and the statement lists that hold a statement."""
from __future__ import annotations

import ast
from typing import Optional


class Parents:
    """Parent links, found by descending only into the nodes whose span holds the target
    (findings are few; linking the whole tree would cost as much as the analysis)."""

    def __init__(self, tree: ast.AST):
        self.tree = tree
        self._parent: dict = {}

    def parent(self, node):
        if node is self.tree:
            return None
        if id(node) not in self._parent:
            self._link(node)
        return self._parent.get(id(node))

    def block_of(self, stmt) -> Optional[list]:
        """The statement list holding ``stmt`` (its parent's body, orelse or finalbody)."""
        parent = self.parent(stmt)
        for field in ("body", "orelse", "finalbody"):
            block = getattr(parent, field, None)
            if isinstance(block, list) and any(s is stmt for s in block):
                return block
        return None

    def _link(self, target) -> None:
        where = (target.lineno, target.col_offset)
        cur = self.tree
        while cur is not target:
            for child in ast.iter_child_nodes(cur):
                if not hasattr(child, "lineno"):
                    continue
                if (child.lineno, child.col_offset) <= where <= (child.end_lineno, child.end_col_offset) \
                        and _contains(child, target):
                    self._parent[id(child)] = cur
                    cur = child
                    break
            else:
                return

    def statement(self, node):
        while node is not None and not isinstance(node, ast.stmt):
            node = self.parent(node)
        return node


def _contains(outer, target) -> bool:
    end = (target.end_lineno, target.end_col_offset)
    return outer is target or end <= (outer.end_lineno, outer.end_col_offset)
