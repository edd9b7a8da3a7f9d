"""gpuperf.simt: the warp-divergence simulator against closed forms and a per-thread reference."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuperf import simt
from gpuperf.simt import If, Loop, Op


def reference_counts(program, n_threads, conditions, trips, warp_size):
    """Independent reference: walk one warp at a time with plain Python sets of lanes."""
    n_warps = -(-n_threads // warp_size)
    issued = [0] * n_warps
    thread_inst = [0] * n_warps

    def run(nodes, w, lanes):
        for node in nodes:
            if not lanes:
                return
            if isinstance(node, Op):
                if node.cost:
                    issued[w] += node.cost
                    thread_inst[w] += node.cost * len(lanes)
            elif isinstance(node, If):
                c = conditions[node.condition]
                run(node.then, w, {t for t in lanes if c[t]})
                run(node.orelse, w, {t for t in lanes if not c[t]})
            else:
                tr = trips[node.trips]
                i = 0
                while True:
                    active = {t for t in lanes if tr[t] > i}
                    if not active:
                        break
                    run(node.body, w, active)
                    i += 1

    for w in range(n_warps):
        run(program, w, set(range(w * warp_size, min(n_threads, (w + 1) * warp_size))))
    return np.array(issued), np.array(thread_inst)


@st.composite
def programs(draw, depth=0):
    nodes = []
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["op", "if", "loop"] if depth < 2 else ["op"]))
        if kind == "op":
            nodes.append(Op(draw(st.integers(0, 5))))
        elif kind == "if":
            nodes.append(If(draw(st.sampled_from(["a", "b"])), draw(programs(depth + 1)),
                            draw(st.one_of(st.just(()), programs(depth + 1)))))
        else:
            nodes.append(Loop("t", draw(programs(depth + 1))))
    return tuple(nodes)


@settings(max_examples=60, deadline=None)
@given(program=programs(), n_threads=st.integers(1, 150), warp_size=st.sampled_from([1, 4, 8, 32]),
       seed=st.integers(0, 2**16))
def test_simulator_matches_per_thread_reference(program, n_threads, warp_size, seed):
    rng = np.random.default_rng(seed)
    conditions = {"a": rng.random(n_threads) < 0.5, "b": rng.random(n_threads) < 0.2}
    trips = {"t": rng.integers(0, 4, n_threads)}
    result = simt.simulate(program, n_threads, conditions, trips, warp_size=warp_size)
    issued, thread_inst = reference_counts(program, n_threads, conditions, trips, warp_size)
    np.testing.assert_array_equal(result.issued_per_warp, issued)
    np.testing.assert_array_equal(result.thread_instructions_per_warp, thread_inst)
    assert 0 <= result.simt_efficiency <= 1


@settings(max_examples=40, deadline=None)
@given(n_warps=st.integers(1, 40), warp_size=st.sampled_from([4, 16, 32, 64]), cost=st.integers(1, 9))
def test_uniform_branch_is_fully_efficient(n_warps, warp_size, cost):
    n = n_warps * warp_size
    cond = simt.branch_condition("uniform", n, warp_size=warp_size)
    r = simt.simulate(simt.two_way_program(cost, cost, 3), n, {"c": cond}, warp_size=warp_size)
    assert r.simt_efficiency == 1.0
    assert r.divergent_warps == 0
    assert r.issued == n_warps * (3 + cost)


@settings(max_examples=40, deadline=None)
@given(n_warps=st.integers(1, 40), warp_size=st.sampled_from([2, 8, 32]), cost=st.integers(1, 9))
def test_alternating_two_way_is_half(n_warps, warp_size, cost):
    n = n_warps * warp_size
    cond = simt.branch_condition("alternating", n, warp_size=warp_size)
    r = simt.simulate(simt.two_way_program(cost, cost), n, {"c": cond}, warp_size=warp_size)
    assert r.simt_efficiency == 0.5
    assert r.divergent_warps == n_warps
    assert r.active_threads_per_instruction == warp_size / 2


@settings(max_examples=40, deadline=None)
@given(n_warps=st.integers(2, 40), warp_size=st.sampled_from([4, 8, 32]))
def test_warp_alternating_never_diverges(n_warps, warp_size):
    n = n_warps * warp_size
    cond = simt.branch_condition("warp_alternating", n, warp_size=warp_size)
    assert cond.mean() == pytest.approx(0.5, abs=1 / n_warps)
    r = simt.simulate(simt.two_way_program(5, 5), n, {"c": cond}, warp_size=warp_size)
    assert r.simt_efficiency == 1.0


@settings(max_examples=60, deadline=None)
@given(n_threads=st.integers(1, 500), p=st.floats(0, 1), warp_size=st.sampled_from([4, 8, 32]))
def test_sorted_diverges_only_in_the_boundary_warp(n_threads, p, warp_size):
    cond = simt.branch_condition("sorted", n_threads, p, warp_size=warp_size)
    r = simt.simulate(simt.two_way_program(4, 4), n_threads, {"c": cond}, warp_size=warp_size)
    n_taken = int(cond.sum())
    assert r.divergent_warps == simt.sorted_divergent_warps(n_threads, n_taken, warp_size)
    assert r.divergent_warps <= 1


@pytest.mark.parametrize("p", [0.0, 0.01, 0.1, 0.5, 0.9, 1.0])
@pytest.mark.parametrize("warp_size", [8, 32])
def test_random_two_way_matches_closed_form(p, warp_size):
    n = warp_size * 20000
    cond = simt.branch_condition("random", n, p, seed=5, warp_size=warp_size)
    r = simt.simulate(simt.two_way_program(6, 6), n, {"c": cond}, warp_size=warp_size)
    assert r.simt_efficiency == pytest.approx(simt.expected_two_way_efficiency(p, warp_size), rel=0.01)


@pytest.mark.parametrize("p", [0.01, 0.1, 0.5])
def test_if_only_matches_closed_form(p):
    n = 32 * 20000
    cond = simt.branch_condition("random", n, p, seed=9)
    r = simt.simulate((If("c", (Op(7),)),), n, {"c": cond})
    assert r.simt_efficiency == pytest.approx(simt.expected_if_only_efficiency(p), rel=0.02)


def test_closed_forms_limits():
    assert simt.expected_two_way_efficiency(0.0) == 1.0
    assert simt.expected_two_way_efficiency(1.0) == 1.0
    assert simt.expected_two_way_efficiency(0.5) == pytest.approx(0.5, abs=1e-9)
    assert simt.expected_two_way_efficiency(0.5, warp_size=1) == 1.0
    assert simt.expected_if_only_efficiency(0.0) == 1.0
    assert simt.expected_if_only_efficiency(1.0) == 1.0


def test_nested_branch_counts():
    n = 64
    tid = np.arange(n)
    c1, c2 = tid % 2 == 0, (tid // 2) % 2 == 0
    r = simt.simulate(simt.nested_program(10), n, {"c1": c1, "c2": c2})
    # per warp: A (16 lanes), B (8), C (8), D (16): 40 issues, 480 thread instructions
    assert list(r.issued_per_warp) == [40, 40]
    assert list(r.thread_instructions_per_warp) == [480, 480]
    assert r.simt_efficiency == pytest.approx(480 / (32 * 40))


@settings(max_examples=40, deadline=None)
@given(trips=st.lists(st.integers(0, 30), min_size=1, max_size=200), warp_size=st.sampled_from([4, 8, 32]))
def test_loop_matches_closed_form(trips, warp_size):
    trips = np.array(trips)
    r = simt.simulate(simt.loop_program(3), trips.size, trips={"trips": trips}, warp_size=warp_size)
    assert r.simt_efficiency == pytest.approx(simt.loop_efficiency(trips, warp_size))


def test_sorting_trip_counts_helps():
    trips = simt.long_tailed_trip_counts(32 * 512, seed=1)
    assert simt.loop_efficiency(np.sort(trips)) > 3 * simt.loop_efficiency(trips)
    assert trips.min() >= 1 and trips.max() <= 256


def test_partial_last_warp():
    r = simt.simulate((Op(2),), 33, warp_size=32)
    assert list(r.issued_per_warp) == [2, 2]
    assert r.thread_instructions == 66
    assert r.simt_efficiency == pytest.approx(66 / (32 * 4))
    assert r.divergent_warps == 0  # the missing lanes do not exist: not divergence


def test_timeline_records_segments():
    cond = simt.branch_condition("alternating", 64)
    r = simt.simulate(simt.two_way_program(3, 5, 2), 64, {"c": cond}, timeline_warps=1)
    assert [(s.start_slot, s.length, s.active_lanes, s.label) for s in r.timeline] == [
        (0, 2, 32, "common"), (2, 3, 16, "then"), (5, 5, 16, "else")]


def test_explorer_grid_is_small_and_valid():
    n_states = len(simt.PATTERNS) * len(simt.EXPLORER_PROBABILITIES) * len(simt.EXPLORER_WARP_SIZES)
    assert n_states <= 300
    s = simt.divergence_explorer_state("alternating", 0.3, 16)
    assert s.simt_efficiency == pytest.approx((2 * 16 + 4 * 16) / (16 * 10))
    assert s.n_warps == 16 and len({seg.warp for seg in s.timeline}) == 4


@pytest.mark.parametrize("kwargs, name", [
    ({"warp_size": 0}, "warp_size"), ({"warp_size": 2.5}, "warp_size"), ({"n_threads": 0}, "n_threads"),
    ({"probability": 1.5}, "probability"), ({"probability": -0.1}, "probability"),
    ({"probability": "x"}, "probability"), ({"pattern": "zigzag"}, "pattern"),
])
def test_branch_condition_rejects_bad_input(kwargs, name):
    args = {"pattern": "random", "n_threads": 64, "probability": 0.5, "warp_size": 32} | kwargs
    with pytest.raises(ValueError, match=name):
        simt.branch_condition(**args)


def test_simulate_rejects_bad_input():
    with pytest.raises(ValueError, match="warp_size"):
        simt.simulate((Op(1),), 10, warp_size=0)
    with pytest.raises(ValueError, match="n_threads"):
        simt.simulate((Op(1),), -3)
    with pytest.raises(ValueError, match="conditions"):
        simt.simulate((If("c", (Op(1),)),), 10)
    with pytest.raises(ValueError, match="conditions"):
        simt.simulate((If("c", (Op(1),)),), 10, {"c": np.ones(9, dtype=bool)})
    with pytest.raises(ValueError, match="trips"):
        simt.simulate((Loop("t", (Op(1),)),), 4, trips={"t": np.array([1, -1, 2, 3])})
    with pytest.raises(ValueError, match="cost"):
        Op(-1)
    with pytest.raises(ValueError, match="program"):
        simt.simulate(("not a node",), 4)
    with pytest.raises(ValueError, match="probability"):
        simt.expected_two_way_efficiency(2.0)
    with pytest.raises(ValueError, match="trip_counts"):
        simt.loop_efficiency([])
    with pytest.raises(ValueError, match="median"):
        simt.long_tailed_trip_counts(10, median=0)
    with pytest.raises(ValueError, match="n_taken"):
        simt.sorted_divergent_warps(10, 11)


@settings(max_examples=40, deadline=None)
@given(n_threads=st.integers(1, 300), warp_size=st.sampled_from([4, 8, 32]), seed=st.integers(0, 999),
       costs=st.tuples(st.integers(0, 9), st.integers(0, 9), st.integers(0, 9)))
def test_fast_counts_equal_the_simulator(n_threads, warp_size, seed, costs):
    rng = np.random.default_rng(seed)
    taken = rng.random(n_threads) < 0.4
    then_cost, else_cost, common = costs
    fast = simt.two_way_counts(taken, then_cost, else_cost, common, warp_size)
    slow = simt.simulate(simt.two_way_program(then_cost, else_cost, common), n_threads, {"c": taken},
                         warp_size=warp_size)
    np.testing.assert_array_equal(fast.issued_per_warp, slow.issued_per_warp)
    np.testing.assert_array_equal(fast.thread_instructions_per_warp, slow.thread_instructions_per_warp)
    trips = rng.integers(0, 7, n_threads)
    fast = simt.loop_counts(trips, then_cost, common, warp_size)
    slow = simt.simulate(simt.loop_program(then_cost, common), n_threads, trips={"trips": trips},
                         warp_size=warp_size)
    np.testing.assert_array_equal(fast.issued_per_warp, slow.issued_per_warp)
    np.testing.assert_array_equal(fast.thread_instructions_per_warp, slow.thread_instructions_per_warp)


def test_h200_case_inputs():
    n = 1024
    assert not simt.h200_case_inputs("div_branch", "none", 0.0, n_threads=n)["c"].any()
    c = simt.h200_case_inputs("div_branch", "random", 0.5, n_threads=n)["c"]
    np.testing.assert_array_equal(c, simt.branch_condition("random", n, 0.5, seed=1))
    nested = simt.h200_case_inputs("div_nested", "alternating", 0.5, n_threads=n)
    assert list(nested["c1"][:4]) == [True, False, True, False]
    assert list(nested["c2"][:4]) == [True, True, False, False]
    trips = simt.h200_case_inputs("div_loop", trips="long_tailed_sorted", n_threads=n)["trips"]
    assert (np.diff(trips) >= 0).all() and trips.max() <= 64
    with pytest.raises(ValueError, match="kernel"):
        simt.h200_case_inputs("div_other")
    with pytest.raises(ValueError, match="trips"):
        simt.h200_case_inputs("div_loop", trips="zipf")
    with pytest.raises(ValueError, match="taken"):
        simt.two_way_counts([1, 0], 1, 1)


PTX_SNIPPET = """
\t.loc\t1 102 20
\tmax.f32 \t%r28, %r1, %r2;
\tmax.f32 \t%r29, %r3, %r4;
\tmax.f32 \t%r34, %r28, %r29;
$L__tmp3:
\tshfl.sync.bfly.b32 \t%r35, %r34, 16, 31, -1;   // comment
\tmax.f32 \t%r36, %r34, %r35;
\tst.shared.b32 \t[%r24], %r36;
\tbar.sync \t0;
\tld.shared.b32 \t%r45, [%r27];
\tshfl.sync.bfly.b32 \t%r46, %r45, 1, 31, -1;
\tmax.f32 \t%r47, %r45, %r46;
\tsub.f32 \t%r50, %r1, %r47;
\tsetp.lt.s32 \t%p1, %r21, %r19;
\tmov.b32 \t%r2, -8388608;
\tmov.u32 %r1, %r2;
\t@%p1 ld.global.b32 { %r1 }, [ %rd1 + 0 ];
"""


def test_ptx_excerpts():
    ex = simt.ptx_reduction_excerpt(PTX_SNIPPET)
    assert ex[0] == "max.f32 %r28, %r1, %r2;" and ex[-1] == "max.f32 %r47, %r45, %r46;"
    assert simt.shuffle_offsets(ex) == [16, 1]
    c = simt.ptx_counts(ex)
    assert (c["shfl_bfly"], c["st_shared"], c["bar_sync"], c["ld_shared"]) == (2, 1, 1, 1)
    load = simt.ptx_predicated_load_excerpt(PTX_SNIPPET)
    assert load == ["setp.lt.s32 %p1, %r21, %r19;", "mov.b32 %r2, -8388608;", "mov.u32 %r1, %r2;",
                    "@%p1 ld.global.b32 { %r1 }, [ %rd1 + 0 ];"]
    assert simt.ptx_counts(simt.ptx_instructions(PTX_SNIPPET))["predicated"] == 1
    with pytest.raises(ValueError, match="ptx"):
        simt.ptx_reduction_excerpt("add.f32 %r1, %r2, %r3;")
    with pytest.raises(ValueError, match="ptx"):
        simt.ptx_predicated_load_excerpt("add.f32 %r1, %r2, %r3;")
    with pytest.raises(ValueError, match="ptx"):
        simt.ptx_instructions(None)
