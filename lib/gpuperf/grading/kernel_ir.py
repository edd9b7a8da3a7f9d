"""A kernel's TTIR function (Triton's IR, made on any machine by :func:`gpuperf.grading.frontend.lower`) read
as a list of operations, and a forward walk over them that follows values to a fixed point.

Two checks read the same parse and walk: :func:`gpuperf.grading.frontend.wrapping_offsets` (32-bit products
of a program id that reach an address) and :func:`gpuperf.grading.dataflow.unstored_dots` (tile products
that reach no store). Each keeps its own rule of what flows where; the walk only visits the operations in
order, round after round, and tells each visit which region (``scf.for``, ``scf.while``, ``scf.if``) it is
in, so that a region's ``scf.yield`` can feed the values the region returns or carries.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Hashable, Sequence

#: A value as its uses name it: ``%x``, ``%arg3``, and ``%r#1`` for the second result of ``%r:2 = ...``.
_VALUE = re.compile(r"%[\w.$-]+(?:#\d+)?")
#: ``iter_args(%new = %init, ...)`` of an ``scf.for``: the values a loop carries and what they start as.
_CARRIED = re.compile(r"(%[\w.$-]+) = (%[\w.$-]+(?:#\d+)?)")
#: ``scf.while (%new = %init, ...) : ...``: the values a while loop carries and what they start as.
_WHILE_CARRIED = re.compile(r"^scf\.while \(([^)]*)\)")
#: ``scf.for %i = %lower to %upper step %step``: the induction variable and its lower bound.
_INDUCTION = re.compile(r"^scf\.for (%[\w.$-]+) = (%[\w.$-]+(?:#\d+)?)")


@dataclass(frozen=True)
class Op:
    """One line of a TTIR function, as the checks read it.

    ``name``: the operation (``tt.dot``, ``arith.muli``, ``scf.yield``; ``}`` for a line that closes a
    region). ``results``: the values it defines, named as their uses name them (``%r#0``, ``%r#1`` of
    ``%r:2 = ...``). ``operands``: the values its text names before an ``iter_args(`` (a loop's bounds and
    induction variable included). ``values``: every value its text names, in order (``iter_args`` too).
    ``carried``: an ``scf.for``'s ``iter_args`` (an ``scf.while``'s operands) as ``(new, init)`` pairs. ``induction``: an ``scf.for``'s
    ``(induction variable, lower bound)``, else None. ``text``: the line without its result names and its
    location."""

    name: str
    results: tuple[str, ...]
    operands: tuple[str, ...]
    values: tuple[str, ...]
    carried: tuple[tuple[str, str], ...]
    induction: tuple[str, str] | None
    text: str

    @property
    def opens_region(self) -> bool:
        """The line opens a region (``... {``); ``} else {`` stays in the one it is in."""
        return self.text.endswith("{") and not self.text.startswith("}")

    @property
    def combines(self) -> bool:
        """A region whose results its body computes from the operands (``tt.reduce``, ``tt.scan``,
        ``tt.map_elementwise``: ``tl.sum``, ``tl.reduce`` with a combine function), not a loop or a branch."""
        return self.opens_region and not self.name.startswith("scf.") and self.name != "tt.func"

    @property
    def closes_region(self) -> bool:
        """The line closes a region (``}`` or ``} ...``, not ``} else {``)."""
        return self.text.startswith("}") and not self.text.endswith("{")


def base_name(value: str) -> str:
    """``%r`` for ``%r#1``: the value a multi-result operation defines, all its results taken as one."""
    return value.split("#")[0]


def kernel_lines(ttir: str) -> list[str]:
    """The lines of the public function (the kernel) of a TTIR module, from its ``tt.func public`` line to its
    own closing line ([] when there is none)."""
    lines = ttir.splitlines()
    start = next((i for i, line in enumerate(lines) if line.lstrip().startswith("tt.func public")), None)
    if start is None:
        return []
    indent = len(lines[start]) - len(lines[start].lstrip())
    out = [lines[start]]
    for line in lines[start + 1:]:
        out.append(line)
        # the function ends at its own closing brace, "}" or "} loc(#loc)" (Triton 3.9): the helper functions
        # after it (those of tl.max, tl.sum) name their own values %a, %b, %0 as the kernel does
        if line.strip().startswith("}") and len(line) - len(line.lstrip()) == indent:
            break
    return out


def parse_op(line: str) -> Op | None:
    """One line of a TTIR function as an :class:`Op` (None for a blank line)."""
    code = line.split(" loc(")[0].strip()
    if not code:
        return None
    results: list[str] = []
    text = code
    if code.startswith("%") and " = " in code:
        head, text = code.split(" = ", 1)
        for result in head.split(","):
            name, _, count = result.strip().partition(":")
            results += [f"{name}#{i}" for i in range(int(count))] if count.isdigit() else [name]
    before_iter_args, has_iter_args, iter_args = text.partition("iter_args(")
    induction = _INDUCTION.match(text)
    carried = tuple(_CARRIED.findall(iter_args)) if has_iter_args else ()
    while_operands = _WHILE_CARRIED.match(text)
    if while_operands:
        carried = tuple(_CARRIED.findall(while_operands.group(1)))
    # an operation in MLIR's generic form (``"tt.reduce"(%x) <{axis = 1 : i32}> ({``) by its bare name
    name = text[1:].split('"', 1)[0] if text.startswith('"') else text.split(" ", 1)[0]
    return Op(name=name, results=tuple(results), operands=tuple(_VALUE.findall(before_iter_args)),
              values=tuple(_VALUE.findall(text)),
              carried=carried,
              induction=induction.groups() if induction else None, text=text.strip())


@dataclass(frozen=True)
class KernelFunction:
    """The kernel's function in a TTIR module: its ``tt.func public`` line and its operations, in order."""

    header: str
    ops: tuple[Op, ...]

    @property
    def integer_arguments(self) -> tuple[str, ...]:
        """The kernel's integer arguments (``%n: i32``; Triton makes one equal to 1 a constant)."""
        return tuple(name for name, _ in re.findall(r"(%[\w.$-]+): (i\d+)", self.header))


def kernel_function(ttir: str) -> KernelFunction | None:
    """The kernel's function of a TTIR module, parsed once into operations (None when the module has none)."""
    lines = kernel_lines(ttir)
    if not lines:
        return None
    ops = (parse_op(line) for line in lines[1:])
    return KernelFunction(lines[0], tuple(op for op in ops if op is not None))


def walk_to_fixed_point(ops: Sequence[Op], visit: Callable[[Op, Op | None], bool], size: Callable[[], Hashable],
                        rounds: int) -> bool:
    """Visits ``ops`` in order, round after round, as ``visit(op, region)``, ``region`` being the line that
    opened the innermost region ``op`` is in (None outside any): loops carry values around through their
    yields, so one pass is not enough. Stops when a round leaves ``size()`` (what the visits have found so
    far) as it was, after ``rounds`` rounds, or at once when a visit returns True; returns whether one did."""
    for _ in range(rounds):
        before = size()
        regions: list[Op] = []
        for op in ops:
            if visit(op, regions[-1] if regions else None):
                return True
            if op.closes_region and regions:
                regions.pop()
            elif op.opens_region:
                regions.append(op)
        if size() == before:
            break
    return False
