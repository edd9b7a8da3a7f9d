"""gpuperf.grading.kernel_ir: a kernel's TTIR function read as operations, and the walk over them that
gpuperf.grading.frontend (32-bit offsets) and gpuperf.grading.dataflow (unstored tile products) share."""

from __future__ import annotations

from gpuperf.grading import kernel_ir

_TTIR = "\n".join((
    "module {",
    "  tt.func public @k(%a_ptr: !tt.ptr<f32>, %n: i32 loc(\"n\"(#loc)), %x: f32) attributes {noinline = false} {",
    "    %c0_i32 = arith.constant 0 : i32 loc(#loc1)",
    "    %0 = tt.get_program_id x : i32 loc(#loc2)",
    "    %r:2 = scf.for %i = %0 to %n step %c0_i32 iter_args(%acc = %x, %b = %r0#1) -> (f32, f32)  : i32 {",
    "      %1 = arith.addf %acc, %b : f32 loc(#loc3)",
    "      scf.yield %1, %b : f32, f32 loc(#loc4)",
    "    } loc(#loc5)",
    "",
    "    tt.store %a_ptr, %r#0 : !tt.ptr<f32> loc(#loc6)",
    "    tt.return loc(#loc7)",
    "  } loc(#loc)",
    "  tt.func private @helper(%a: f32) -> f32 attributes {noinline = false} {",
    "    tt.return %a : f32 loc(#loc8)",
    "  } loc(#loc8)",
    "} loc(#loc)"))


def test_a_loop_line_is_read_into_its_parts():
    kernel = kernel_ir.kernel_function(_TTIR)
    assert kernel.integer_arguments == ("%n",)
    loop = kernel.ops[2]
    assert loop.name == "scf.for" and loop.results == ("%r#0", "%r#1")
    assert loop.operands == ("%i", "%0", "%n", "%c0_i32")
    assert loop.values == loop.operands + ("%acc", "%x", "%b", "%r0#1")
    assert loop.carried == (("%acc", "%x"), ("%b", "%r0#1")) and loop.induction == ("%i", "%0")
    assert loop.opens_region and not loop.closes_region
    assert kernel.ops[5].name == "}" and kernel.ops[5].closes_region
    # the function's own closing line ends it: the helper after it is not read
    assert [op.name for op in kernel.ops][-3:] == ["tt.store", "tt.return", "}"] and len(kernel.ops) == 9
    assert kernel_ir.base_name("%r#1") == "%r" and kernel_ir.kernel_function("module {\n}") is None


def test_the_walk_tells_a_yield_its_region_and_runs_to_a_fixed_point():
    ops = kernel_ir.kernel_function(_TTIR).ops
    live, seen = {"%x"}, []

    def visit(op, region):
        if op.name == "scf.yield":
            seen.append(region.name)
        if any(v in live for v in op.operands):
            live.update(op.results)
        live.update(new for new, init in op.carried if init in live)
        if op.name == "scf.yield" and op.operands[0] in live:
            live.add(region.results[0])
        return False

    assert not kernel_ir.walk_to_fixed_point(ops, visit, lambda: len(live), rounds=10)
    assert {"%acc", "%1", "%r#0"} <= live and "%r#1" not in live
    assert seen == ["scf.for"] * 2  # a second round finds nothing new
    assert kernel_ir.walk_to_fixed_point(ops, lambda op, region: op.name == "tt.store", lambda: 0, rounds=10)
