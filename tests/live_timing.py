"""Find the asserts of a notebook that read a live timing (used by tests/test_live_timing.py).

A live measurement (a CPU timing on the reader's laptop, a benchmark run live on their GPU) is shown and
discussed in words, never asserted: a busy machine must not fail a cell (CONTRIBUTING.md, "Live
measurements"). This module follows, cell by cell, which names hold a value computed from a live
timing and reports every ``assert`` that reads one.

How a value becomes live ("tainted"): it is the result of a call of a timing function (:data:`SOURCES`: the
measurement helpers of ``gpuperf.benchmark`` (the harness and ``gpuperf.benchmark.timing``,
``layer_profile``, ...), ``gpuperf.overhead`` and ``gpuperf.labs``, and the clocks of ``time``, ``timeit``, Triton and CUDA events), or it is computed
from a live value, or it is a function of the notebook whose body does either (calling it gives a live
value), or it is a container a live value was put into (``d[k] = t``, ``xs.append(t)``).

The check runs the notebook's code twice in the abstract: without a GPU (``cuda_available()``,
``live_gpu_available()``, ``torch.cuda.is_available()`` and ``env.on_gpu`` are False) and with one (True);
a branch that world cannot take is skipped, so ``if not live: assert <recorded number>`` passes in both.
A name bound under an ``if NAME:`` whose value is unknown is live only where NAME has that value, so
``if mm_live: rows = <live> else: rows = <recorded>`` followed by ``if not mm_live: assert rows ...``
passes too.

Load-independent facts about a live value are fine and not flagged: its ``len(...)``, the attributes
:data:`SAFE_ATTRIBUTES` of a measurement (the work it counted, its unit, dtype, device) and a run's
``["provenance"]``. Anything else
that is load-independent but reads a live name (a result computed alongside a timing, say) can say so
with a comment ``# load-independent: why`` on the assert's line.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from pathlib import Path

#: Clocks: calls whose result is a live timing (by function or method name).
CLOCKS = frozenset({
    "perf_counter", "perf_counter_ns", "monotonic", "monotonic_ns", "process_time", "process_time_ns",
    "thread_time", "timeit", "autorange", "blocked_autorange", "adaptive_autorange", "do_bench",
    "do_bench_cudagraph", "elapsed_time",
})
#: The measurement helpers of the course's package (gpuperf.benchmark and its modules, .overhead, .labs, ...): every
#: public function of lib/gpuperf that calls a clock or another helper (:func:`library_timing_functions`;
#: tests/test_live_timing.py fails when one is missing here).
HELPERS = frozenset({
    "measure_matmul_flop_per_s", "measure_copy_bytes_per_s", "measure_add_flop_per_s", "time_calls_s",
    "python_call_time_s", "median_time_s", "your_accelerator", "run_cases", "time_callable",
    "run_elementwise_benchmark", "wall_time_s", "run_layer_profile", "time_host_callable",
    "time_wall_per_call", "event_times_s", "sweep_bytes_in_flight", "sweep_strides", "time_collective_s",
    "run_collectives",
})
#: Functions that measure only on a GPU (``load_or_run(live, ...)`` when ``live`` is true, ``chapter_profile``
#: when a capable GPU is present) and otherwise return a recorded run: not sources. A chapter asserts on their
#: result only in its recorded branch (``if not live:``); the checker does not follow that condition into
#: these functions, so an assert outside the branch would go unseen on a GPU.
RECORDED_UNLESS_LIVE = frozenset({"load_or_run", "chapter_profile"})
SOURCES = CLOCKS | HELPERS
#: ``time.time()`` is a clock too, but ``time`` is a common name; only ``time.time`` is a source.
CLOCK_ATTRIBUTES = {("time", "time"), ("time", "time_ns")}
#: Calls that say whether a GPU is here (the world decides them).
WORLD_CALLS = frozenset({"cuda_available", "live_gpu_available", "is_available"})
WORLD_ATTRIBUTES = frozenset({"on_gpu"})
#: Attributes of a live measurement that no load changes.
SAFE_ATTRIBUTES = frozenset({"work", "unit", "dtype", "device", "what", "n_elements", "shape"})
#: Keys of a live run that no load changes (``run["provenance"]``: device, versions, date, config).
SAFE_KEYS = frozenset({"provenance"})
#: Calls on a live value that no load changes.
SAFE_CALLS = frozenset({"len", "isinstance", "type", "callable"})
#: Methods that put their arguments into the object they are called on.
MUTATORS = frozenset({"append", "extend", "update", "add", "insert", "setdefault", "appendleft"})
ESCAPE = "# load-independent"

Conds = frozenset  # of (guard name, bool): the branch conditions under which a fact holds


@dataclass(frozen=True)
class Finding:
    cell: int  # index of the cell in the notebook's cell list (0-based)
    line: int  # line of the assert in the cell (1-based)
    world: str  # "without a GPU" or "with a GPU"
    source: str  # the assert
    names: tuple[str, ...]  # the live names it reads

    def __str__(self) -> str:
        return (f"cell {self.cell} line {self.line} ({self.world}): {self.source}  "
                f"[live: {', '.join(self.names)}]")


def _consistent(a: Conds, b: Conds) -> bool:
    da = dict(a)
    return all(da.get(g, v) == v for g, v in b)


def _bound_inside(node: ast.AST) -> set[str]:
    """Names an expression binds for itself (comprehension targets, lambda arguments)."""
    out: set[str] = set()
    for n in ast.walk(node):
        if isinstance(n, ast.comprehension):
            out |= {t.id for t in ast.walk(n.target) if isinstance(t, ast.Name)}
        elif isinstance(n, ast.Lambda):
            out |= {a.arg for a in (*n.args.posonlyargs, *n.args.args, *n.args.kwonlyargs)}
        elif isinstance(n, ast.NamedExpr) and isinstance(n.target, ast.Name):
            out.discard(n.target.id)
    return out


def _call_name(call: ast.Call) -> str | None:
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None


def _is_source_call(call: ast.Call, sources: frozenset[str]) -> bool:
    f = call.func
    if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and (f.value.id, f.attr) in CLOCK_ATTRIBUTES:
        return True
    return _call_name(call) in sources


def _references(node: ast.AST, sources: frozenset[str] = SOURCES) -> tuple[set[str], bool]:
    """(names the expression reads, outside load-independent uses), whether it calls a timing function."""
    bound = _bound_inside(node)
    names: set[str] = set()
    calls_source = False

    def visit(n: ast.AST) -> None:
        nonlocal calls_source
        if isinstance(n, ast.Call):
            if _call_name(n) in SAFE_CALLS and isinstance(n.func, ast.Name):
                return
            if _is_source_call(n, sources):
                calls_source = True
        if isinstance(n, ast.Attribute) and n.attr in SAFE_ATTRIBUTES and isinstance(n.value, ast.Name):
            return
        if (isinstance(n, ast.Subscript) and isinstance(n.slice, ast.Constant)
                and n.slice.value in SAFE_KEYS):  # run["provenance"]: where and when, not how fast
            return
        if isinstance(n, ast.Name) and n.id not in bound:
            names.add(n.id)
        for child in ast.iter_child_nodes(n):
            visit(child)

    visit(node)
    return names, calls_source


class _World:
    def __init__(self, gpu: bool, lines_of, sources: frozenset[str]):
        self.gpu = gpu
        self.sources = sources
        self.known: dict[str, bool] = {}  # names whose value the world decides (live = cuda_available())
        self.taint: dict[str, list[Conds]] = {}
        self.findings: list[Finding] = []
        self.lines_of = lines_of  # cell index -> its source lines
        self.cell = 0

    # --- values ---------------------------------------------------------------------------------------
    def evaluate(self, node: ast.AST, conds: Conds) -> bool | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, bool):
            return node.value
        if isinstance(node, ast.Call) and _call_name(node) in WORLD_CALLS:
            return self.gpu
        if isinstance(node, ast.Attribute) and node.attr in WORLD_ATTRIBUTES:
            return self.gpu
        if isinstance(node, ast.Name):
            if node.id in self.known:
                return self.known[node.id]
            return dict(conds).get(node.id)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            v = self.evaluate(node.operand, conds)
            return None if v is None else not v
        if isinstance(node, ast.BoolOp):
            values = [self.evaluate(v, conds) for v in node.values]
            if isinstance(node.op, ast.And):
                return False if False in values else True if all(v is True for v in values) else None
            return True if True in values else False if all(v is False for v in values) else None
        return None

    def facts(self, node: ast.AST | None, conds: Conds) -> list[Conds]:
        """The conditions under which the expression's value is live (empty: never)."""
        if node is None:
            return []
        if isinstance(node, ast.IfExp):
            v = self.evaluate(node.test, conds)
            if v is not None:
                return self.facts(node.body if v else node.orelse, conds)
        names, calls_source = _references(node, self.sources)
        out = [conds] if calls_source else []
        for name in sorted(names):
            for f in self.taint.get(name, []):
                if _consistent(conds, f):
                    merged = Conds(conds | f)
                    if merged not in out:
                        out.append(merged)
        return out

    def live_names(self, node: ast.AST, conds: Conds) -> list[str]:
        names, calls_source = _references(node, self.sources)
        found = sorted(n for n in names if any(_consistent(conds, f) for f in self.taint.get(n, [])))
        return found + (["<a timing call>"] if calls_source else [])

    # --- binding --------------------------------------------------------------------------------------
    def bind(self, target: ast.AST, facts: list[Conds], replace: bool = True) -> None:
        if isinstance(target, ast.Name):
            if replace:
                self.taint.pop(target.id, None)
            if facts:
                self.taint.setdefault(target.id, [])
                self.taint[target.id] += [f for f in facts if f not in self.taint[target.id]]
        elif isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                self.bind(elt, facts, replace)
        elif isinstance(target, ast.Starred):
            self.bind(target.value, facts, replace)
        elif isinstance(target, (ast.Subscript, ast.Attribute)):
            base = target.value
            while isinstance(base, (ast.Subscript, ast.Attribute)):
                base = base.value
            if isinstance(base, ast.Name):
                self.bind(base, facts, replace=False)  # a container holding a live value

    # --- statements -----------------------------------------------------------------------------------
    def run(self, body: list[ast.stmt], conds: Conds) -> None:
        for stmt in body:
            self.statement(stmt, conds)

    def branch(self, body: list[ast.stmt], conds: Conds) -> tuple[dict, dict]:
        saved = ({k: list(v) for k, v in self.taint.items()}, dict(self.known))
        self.run(body, conds)
        result = (self.taint, self.known)
        self.taint, self.known = saved
        return result

    def statement(self, s: ast.stmt, conds: Conds) -> None:
        if isinstance(s, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = s.targets if isinstance(s, ast.Assign) else [s.target]
            facts = self.facts(s.value, conds)
            for t in targets:
                self.bind(t, facts, replace=not isinstance(s, ast.AugAssign))
                if isinstance(t, ast.Name):
                    value = self.evaluate(s.value, conds) if s.value is not None else None
                    if value is None:
                        self.known.pop(t.id, None)
                    else:
                        self.known[t.id] = value
        elif isinstance(s, ast.Expr):
            call = s.value
            if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr in MUTATORS:
                facts = [f for a in (*call.args, *[k.value for k in call.keywords]) for f in self.facts(a, conds)]
                self.bind(call.func.value, facts, replace=False)
        elif isinstance(s, (ast.For, ast.AsyncFor)):
            self.bind(s.target, self.facts(s.iter, conds))
            for _ in range(2):  # a value made live in one iteration reaches the next
                self.run(s.body, conds)
            self.run(s.orelse, conds)
        elif isinstance(s, ast.While):
            for _ in range(2):
                self.run(s.body, conds)
            self.run(s.orelse, conds)
        elif isinstance(s, ast.If):
            value = self.evaluate(s.test, conds)
            if value is True:
                self.run(s.body, conds)
            elif value is False:
                self.run(s.orelse, conds)
            else:
                test, positive = s.test, True
                if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
                    test, positive = test.operand, False
                guard = test.id if isinstance(test, ast.Name) else None
                then_conds = Conds(conds | {(guard, positive)}) if guard else conds
                else_conds = Conds(conds | {(guard, not positive)}) if guard else conds
                taint_a, known_a = self.branch(s.body, then_conds)
                taint_b, known_b = self.branch(s.orelse, else_conds)
                self.taint = {k: taint_a.get(k, []) + [f for f in taint_b.get(k, []) if f not in taint_a.get(k, [])]
                              for k in {*taint_a, *taint_b}}
                self.known = {k: v for k, v in known_a.items() if known_b.get(k) == v}
        elif isinstance(s, (ast.With, ast.AsyncWith)):
            for item in s.items:
                if item.optional_vars is not None:
                    self.bind(item.optional_vars, self.facts(item.context_expr, conds))
            self.run(s.body, conds)
        elif isinstance(s, ast.Try) or type(s).__name__ == "TryStar":
            self.run(s.body, conds)
            for h in s.handlers:
                self.run(h.body, conds)
            self.run(s.orelse, conds)
            self.run(s.finalbody, conds)
        elif isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)):
            # calling it gives a live value when its body times something or reads a live global
            body = ast.Module(body=s.body, type_ignores=[])
            names, calls_source = _references(body, self.sources)
            local = {a.arg for a in (*s.args.posonlyargs, *s.args.args, *s.args.kwonlyargs)}
            local |= {a.arg for a in (s.args.vararg, s.args.kwarg) if a is not None}
            local |= {n.id for n in ast.walk(body) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
            facts = [conds] if calls_source else []
            facts += [Conds(conds | f) for n in sorted(names - local) for f in self.taint.get(n, [])
                      if _consistent(conds, f)]
            self.bind(ast.Name(id=s.name), facts)
            self.known.pop(s.name, None)
        elif isinstance(s, (ast.Import, ast.ImportFrom)):
            for alias in s.names:
                self.taint.pop((alias.asname or alias.name).split(".")[0], None)
        elif isinstance(s, ast.Delete):
            for t in s.targets:
                if isinstance(t, ast.Name):
                    self.taint.pop(t.id, None)
        elif isinstance(s, ast.Assert):
            names = self.live_names(s.test, conds)
            lines = self.lines_of[self.cell][s.lineno - 1:s.end_lineno]
            if names and not any(ESCAPE in line for line in lines):
                text = " ".join(line.strip() for line in lines)
                self.findings.append(Finding(self.cell, s.lineno, "with a GPU" if self.gpu else "without a GPU",
                                             text[:160], tuple(names)))


def library_timing_functions(lib: Path) -> dict[str, str]:
    """The package's public module-level functions that call a clock (:data:`CLOCKS`, ``time.time``) or one
    of :data:`HELPERS`: ``{name: "path:line"}``. Each should be in :data:`HELPERS` (a test checks it)."""
    found = {}
    for path in sorted(Path(lib).rglob("*.py")):
        tree = ast.parse(path.read_text())
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not node.name.startswith("_"):
                if any(_is_source_call(c, SOURCES) for c in ast.walk(node) if isinstance(c, ast.Call)):
                    found[node.name] = f"{path.relative_to(Path(lib).parent)}:{node.lineno}"
    return found


_MAGIC_ASSIGN = re.compile(r"^(\s*)([\w, ]+?)\s*=\s*%+timeit\b.*$")


def _python_of(source: str) -> str:
    """A cell's code with IPython syntax made plain Python (line numbers kept): magics and shell lines become
    ``pass``; ``t = %timeit -o f()`` becomes a timing call."""
    out = []
    for line in source.splitlines():
        m = _MAGIC_ASSIGN.match(line)
        if m:
            out.append(f"{m.group(1)}{m.group(2)} = perf_counter()")
        elif line.lstrip().startswith(("%", "!")):
            out.append(line[: len(line) - len(line.lstrip())] + "pass")
        else:
            out.append(line)
    return "\n".join(out)


def find_live_asserts(cells: list[str | None], sources: frozenset[str] = SOURCES) -> list[Finding]:
    """The asserts reading a live timing in a notebook's code cells (``cells``: each cell's source; markdown
    cells may be given as None to keep the indices of the notebook). ``sources``: the timing functions."""
    lines_of = {i: (c or "").splitlines() for i, c in enumerate(cells)}
    findings: dict[tuple, Finding] = {}
    for gpu in (False, True):
        world = _World(gpu, lines_of, sources)
        for i, source in enumerate(cells):
            if source is None:
                continue
            try:
                tree = ast.parse(_python_of(source))
            except SyntaxError:
                continue
            world.cell = i
            world.run(tree.body, Conds())
        for f in world.findings:
            key = (f.cell, f.line)
            if key in findings:  # both worlds: say so once
                findings[key] = Finding(f.cell, f.line, "with and without a GPU", f.source,
                                        tuple(sorted(set(findings[key].names) | set(f.names))))
            else:
                findings[key] = f
    return sorted(findings.values(), key=lambda f: (f.cell, f.line))


def notebook_cells(path: Path) -> list[str | None]:
    nb = json.loads(Path(path).read_text())
    return ["".join(c["source"]) if c["cell_type"] == "code" else None for c in nb["cells"]]


if __name__ == "__main__":  # python tests/live_timing.py book/*.ipynb labs/*.ipynb
    import sys

    for arg in sys.argv[1:]:
        for finding in find_live_asserts(notebook_cells(Path(arg))):
            print(f"{arg} {finding}")
