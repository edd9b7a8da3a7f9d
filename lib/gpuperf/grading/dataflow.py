"""Where a kernel's values go, read from its TTIR (Triton's IR, made on any machine by
:func:`gpuperf.grading.frontend.lower`): a tile product (``tl.dot``) whose result never reaches memory was
computed to be counted, not used. The interpreter counts every ``tl.dot``'s multiply-adds; this says which of
them the kernel stores."""

from __future__ import annotations

import re

from gpuperf.grading.frontend import _kernel_lines

_VALUE = re.compile(r"%[\w.$-]+(?:#\d+)?")
_WRITES = ("tt.store", "tt.atomic_rmw", "tt.atomic_cas", "tt.descriptor_store", "tt.descriptor_reduce")


def _ops(lines: list[str]) -> list[tuple[str, list[str], list[str], list[tuple[str, str]], str]]:
    """(op, results, operands, loop pairs (new, init), body) per line. Results are named as their uses name
    them (``%r#0``, ``%r#1`` of ``%r:2 = ...``); a region's opening line keeps the values an ``scf.for``
    carries (``iter_args(%new = %init)``)."""
    ops = []
    for line in lines[1:]:
        code = line.split(" loc(")[0].strip()
        if not code:
            continue
        results, body = [], code
        if code.startswith("%") and " = " in code:
            head, body = code.split(" = ", 1)
            for r in head.split(","):
                name, _, count = r.strip().partition(":")
                results += [f"{name}#{i}" for i in range(int(count))] if count.isdigit() else [name]
        op = body.split(" ", 1)[0]
        pairs = []
        if "iter_args(" in body:
            pairs = re.findall(r"(%[\w.$-]+) = (%[\w.$-]+(?:#\d+)?)", body.split("iter_args(", 1)[1])
        operands = _VALUE.findall(body.split("iter_args(", 1)[0])
        ops.append((op, results, operands, pairs, body))
    return ops


def _reaches_a_write(ops, seed: str) -> bool:
    """Whether value ``seed`` flows (through any operation, a loop's carried values and its yields, position
    by position) into an operand of a store or an atomic."""
    live = {seed}
    for _ in range(len(ops) + 1):  # to a fixed point: loops carry values around through their yields
        size = len(live)
        stack: list = []
        for op, results, operands, pairs, body in ops:
            hit = any(v in live for v in operands)
            if hit and op in _WRITES:
                return True
            code = body.strip()
            opens = code.endswith("{") and not code.startswith("}")
            if hit and (not opens or op == "scf.if"):  # a loop's results come from its yield, not its bounds
                live.update(results)
            for new, init in pairs:
                if init in live:
                    live.add(new)
            if code.startswith("}") and stack and not code.endswith("{"):  # a region closes
                stack.pop()
            elif opens:  # a region opens ("} else {" keeps it)
                stack.append((results, [new for new, _ in pairs]))
            if op == "scf.yield" and stack:  # position i feeds the region's result i and carried value i
                region_results, carried = stack[-1]
                for i, v in enumerate(operands):
                    if v in live:
                        live.update(region_results[i:i + 1])
                        live.update(carried[i:i + 1])
        if len(live) == size:
            return False
    return False


def unstored_dots(ttir: str) -> int:
    """How many of the kernel's own ``tl.dot`` products (``tt.dot`` in its public function) never reach a
    store or an atomic: their multiply-adds are done for nothing (0 when the TTIR is empty)."""
    ops = _ops(_kernel_lines(ttir))
    seeds = [results[0] for op, results, *_ in ops if op in ("tt.dot", "tt.dot_scaled") and results]
    return sum(not _reaches_a_write(ops, seed) for seed in seeds)
