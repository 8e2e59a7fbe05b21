"""Abstract states share their globals and heap until one writes (copy-on-write): a branch or a
loop pass that leaves them alone costs no copy, and a join of states that left one alone keeps
it without looking at its entries."""
from __future__ import annotations

from gradguard.state import State, join_states
from gradguard.values import UNKNOWN, Const


def _state() -> State:
    return State(None, {"a": Const(1)}, {("o", "x"): Const(1)}, {}, True)


def test_a_copy_shares_globals_and_heap_until_either_writes():
    st = _state()
    other = st.copy()
    assert other.heap is st.heap and other.globals is st.globals
    other.own_heap()[("o", "y")] = Const(2)
    st.bind("b", Const(3))
    assert ("o", "y") not in st.heap and ("o", "y") in other.heap
    assert "b" not in other.globals and "b" in st.globals
    # the original wrote to a copy of its own: the other still reads what it had
    assert other.globals == {"a": Const(1)}


def test_a_join_keeps_a_dict_no_branch_changed_and_shares_it_safely():
    st = _state()
    then, orelse = st.copy(), st
    then.own_heap()[("o", "y")] = Const(1)  # the heap changed on one branch, the globals on none
    out = join_states([then, orelse])
    assert out.globals is st.globals
    out.bind("c", UNKNOWN)  # shared: the join's first write copies
    assert "c" not in st.globals and "c" not in then.globals


def test_a_join_of_different_values_makes_a_dict_of_its_own():
    st = _state()
    then, orelse = st.copy(), st
    then.own_heap()[("o", "x")] = Const(2)
    out = join_states([then, orelse])
    assert out.heap is not then.heap and out.heap is not orelse.heap
    assert out.heap[("o", "x")] != Const(1) and orelse.heap[("o", "x")] == Const(1)
    out.own_heap()[("o", "z")] = UNKNOWN
    assert ("o", "z") not in then.heap and ("o", "z") not in orelse.heap
