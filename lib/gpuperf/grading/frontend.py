"""A kernel must be one Triton can compile: lower it through Triton's front end (Python to TTIR) on every
machine, the CPU included.

Under Triton's interpreter a ``@triton.jit`` body is plain Python run on NumPy arrays: ``x.handle.data`` is a
block's values, so NumPy arithmetic there (or any Python on the values) runs and even gives the right
answer, although no GPU could compile the kernel. The front end that turns the body into Triton's IR (TTIR)
needs no GPU and no ``ptxas``: :func:`lowering_error` runs it for the kernel about to be interpreted, with the
argument types of that launch (an integer equal to 1 specialised into a constant, as a launch on a GPU
does), targeting an sm_90 GPU, and returns the compiler's complaint ("" when the kernel lowers).

The interpreter replaces Triton's own ``@jit`` helpers (``tl.sum``, ``tl.cdiv``, ...) by interpreted ones
when ``TRITON_INTERPRET=1``; while lowering, every interpreted function in ``triton.language`` and in the
kernel's globals is swapped for a ``JITFunction`` of the same Python function, and put back afterwards.
Where this Triton lays out its front end differently (another version), nothing is checked and
:func:`unavailable` says why.
"""

from __future__ import annotations

import inspect
import re
import sys

from gpuperf.grading.kernel_ir import Op, base_name, kernel_function, kernel_lines, walk_to_fixed_point

#: ``"unavailable"``: why the front end could not be run on this Triton ("" while it can); ``"pristine"``:
#: triton.language before the interpreter patched it (see :func:`_pristine`). One dict, changed in place.
_STATE: dict = {"unavailable": "", "pristine": None}


def unavailable() -> str:
    """Why the front end could not be run here ("" while it can)."""
    return _STATE["unavailable"]


def _triton_language_state() -> list:
    """Every attribute of ``triton.language``'s modules and of the classes defined in them. Triton's
    interpreter patches them to run a kernel on NumPy (``tl.dtype.to_ir``, ``tl.range``, every builtin), and
    its device-function path (``InterpretedFunction.__call__``) never restores them: in a process that also
    compiles kernels (a GPU machine), the next compilation would run the interpreter's versions and fail
    ("'ir.value' object has no attribute 'dtype'"). :func:`_restore_triton_language` puts them back."""
    state = []
    for name, module in list(sys.modules.items()):
        if module is None or not (name == "triton.language" or name.startswith("triton.language.")):
            continue
        state.append((module, dict(vars(module))))
        for value in list(vars(module).values()):
            if isinstance(value, type) and getattr(value, "__module__", "").startswith("triton.language"):
                state.append((value, dict(vars(value))))
    return state


def _restore_triton_language(state: list) -> None:
    seen = set()
    for owner, before in state:
        if id(owner) in seen:
            continue
        seen.add(id(owner))
        now = dict(vars(owner))
        for name, value in before.items():
            if now.get(name, _MISSING) is not value:
                try:
                    setattr(owner, name, value)
                except (AttributeError, TypeError):  # a read-only slot of a class: nothing was patched there
                    pass
        for name in now.keys() - before.keys():
            try:
                delattr(owner, name)
            except (AttributeError, TypeError):
                pass


_MISSING = object()


def _interpreters(state) -> bool:
    """Whether ``state`` holds functions the interpreter put into triton.language (its patches)."""
    for _, names in state:
        for value in names.values():
            fn = getattr(value, "fget", value)
            code = getattr(fn, "__code__", None)
            if code is not None and code.co_filename.replace("\\", "/").endswith("runtime/interpreter.py"):
                return True
    return False


def _pristine():
    """triton.language as imported, before the interpreter patched it (Triton's interpreter leaves its
    patches in place after a device function runs): taken when the grader is imported, which the labs do
    before any kernel runs; None (nothing checked) when it was already patched then."""
    if "triton.language" not in sys.modules and "gpuperf.kernels" not in sys.modules:
        return None  # Triton is imported after gpuperf.kernels chose its mode: taken at the first lowering
    try:
        import triton.language  # noqa: F401
        import triton.runtime.interpreter  # noqa: F401
    except ImportError:  # pragma: no cover - no Triton
        return None
    state = _triton_language_state()
    return None if _interpreters(state) else tuple(state)


_STATE["pristine"] = _pristine()


def _jit_of(fn, made: dict):
    """A ``JITFunction`` of the Python function ``fn``, made afresh for each lowering (``made`` holds those of
    one lowering): no table a reader's cell could fill decides what is compiled."""
    from triton.runtime.jit import JITFunction

    if fn not in made:
        made[fn] = JITFunction(fn)
    return made[fn]


def _signature(jit, fn, args, kwargs, runtime=()):
    """(signature, constexprs) of one launch, as ``ASTSource`` takes them; the constexprs named in
    ``runtime`` become run-time arguments of their integer type."""
    from triton.runtime.jit import mangle_type

    params = inspect.signature(fn).parameters
    bound = inspect.signature(fn).bind_partial(*args, **{k: v for k, v in kwargs.items() if k in params})
    bound.apply_defaults()
    constexpr_names = {p.name for p in jit.params if p.is_constexpr}
    signature, constexprs = {}, {}
    for name, value in bound.arguments.items():
        value = getattr(value, "value", value) if name in constexpr_names else value
        if name in runtime and type(value) is int:
            signature[name] = mangle_type(value)
        elif name in constexpr_names or value is None or (type(value) is int and value == 1):
            signature[name] = "constexpr"
            constexprs[name] = value
        elif isinstance(value, bool):
            signature[name] = "i1"
        else:
            signature[name] = mangle_type(value)
    return signature, constexprs


def _swapped(fn):
    """Every interpreted function in triton.language (modules and classes) and in ``fn``'s globals, as
    (owner, name, interpreted function), for :func:`_lower` to swap for JIT functions and back."""
    import sys

    from triton.runtime.interpreter import InterpretedFunction

    owners = []
    for name, module in list(sys.modules.items()):
        if module is None or not (name == "triton.language" or name.startswith("triton.language.")):
            continue
        owners.append(module)
        owners += [v for v in list(vars(module).values())
                   if isinstance(v, type) and getattr(v, "__module__", "").startswith("triton.language")]
    swaps = []
    for owner in owners:
        for name, value in list(vars(owner).items()):
            if isinstance(value, InterpretedFunction):
                swaps.append((owner, name, value))
    glb = getattr(fn, "__globals__", {})
    for name, value in list(glb.items()):
        if isinstance(value, InterpretedFunction):
            swaps.append((glb, name, value))
    return swaps


def _set(owner, name, value):
    if isinstance(owner, dict):
        owner[name] = value
    else:
        setattr(owner, name, value)


def _lower(jit, signature, constexprs) -> None:
    import warnings

    with warnings.catch_warnings():  # Triton 3.9 warns about a knob's default while parsing options
        warnings.simplefilter("ignore")
        return _lower_quietly(jit, signature, constexprs)


def _lower_quietly(jit, signature, constexprs) -> None:
    from triton._C.libtriton import ir
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    from triton.compiler.compiler import make_backend

    target = GPUTarget("cuda", 90, 32)
    backend = make_backend(target)
    options = backend.parse_options({"num_warps": 4})
    codegen_fns = backend.get_codegen_implementation(options)
    module_map = backend.get_module_map()
    context = ir.context()
    ir.load_dialects(context)
    backend.load_dialects(context)
    src = ASTSource(fn=jit, signature=signature, constexprs=constexprs)
    if len(inspect.signature(src.make_ir).parameters) >= 5:
        return src.make_ir(target, options, codegen_fns, module_map, context)
    # an earlier Triton: make_ir(options, codegen_fns, module_map, context)
    return src.make_ir(options, codegen_fns, module_map, context)


def lowering_error(fn, args, kwargs) -> str:
    """What Triton's front end says about kernel ``fn`` (a Python function) launched with ``args``/``kwargs``:
    "" when it lowers to TTIR, or when the front end cannot be run here (:func:`unavailable`)."""
    return lower(fn, args, kwargs)[0]


def lower(fn, args, kwargs, runtime=()) -> tuple[str, str]:
    """``(complaint, ttir)``: the compiler's complaint ("" when the kernel lowers or nothing could be checked)
    and the kernel's TTIR as text ("" when it did not lower); the constexprs named in ``runtime`` are lowered
    as run-time integers (see :func:`wrapping_constexpr_offsets`)."""
    try:
        from triton.compiler.errors import CompilationError

        made: dict = {}
        jit = _jit_of(fn, made)
        signature, constexprs = _signature(jit, fn, args, kwargs, runtime)
    except Exception as exc:  # another Triton's layout, or arguments it cannot type: nothing checked
        _STATE["unavailable"] = f"{type(exc).__name__}: {exc}"[:200]
        return "", ""
    if _STATE["pristine"] is None:
        _STATE["pristine"] = _pristine()
    if _STATE["pristine"] is None:
        _STATE["unavailable"] = ("triton.language was already patched by Triton's interpreter when the "
                                 "grader was imported (import gpuperf.grading before running kernels)")
        return "", ""
    current = _triton_language_state()
    _restore_triton_language(list(_STATE["pristine"]))
    swaps = _swapped(fn)
    for owner, name, value in swaps:
        _set(owner, name, _jit_of(value.fn, made))
    text = ""
    try:
        text = str(_lower(jit, signature, constexprs))
        message = ""
    except CompilationError as exc:
        message = _first_lines(exc)
    except Exception as exc:  # the front end's own machinery on this Triton: nothing checked
        _STATE["unavailable"] = f"{type(exc).__name__}: {exc}"[:200]
        message = ""
    finally:
        for owner, name, value in swaps:
            _set(owner, name, value)
        _restore_triton_language(current)
    return message, text


# ---- sizes and strides given as tl.constexpr -------------------------------------------------------------

#: Calls whose arguments must be compile-time constants: a constexpr named in one is a block's shape (or a
#: count the compiler unrolls), not a stride.
_SHAPE_CALLS = frozenset(("arange", "zeros", "full", "zeros_like", "full_like", "reshape", "view", "broadcast_to",
                          "static_range", "expand_dims", "permute", "histogram", "multiple_of", "max_contiguous",
                          "max_constancy"))
#: Keyword arguments that must be compile-time constants, in any call.
_SHAPE_KEYWORDS = frozenset(("axis", "keep_dims", "num_stages", "loop_unroll_factor", "shape", "block_shape",
                             "order", "max_num_imprecise_acc", "dims", "num_warps"))
#: Positional arguments that must be constants: (call, index of the first).
_SHAPE_FROM = {"make_block_ptr": 4, "make_tensor_descriptor": 3}


def _names_in(node) -> set:
    import ast

    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def shape_names(fn, depth: int = 2) -> set:
    """The parameters of kernel ``fn`` (a Python function) that give a block its shape: named in a call that
    needs a compile-time constant (``tl.arange``, ``tl.zeros``, ``tl.full``, a reshape, ...), in a keyword
    argument that does (``axis=``, ``num_stages=``), through a local name computed from them, or passed to a
    ``@triton.jit`` helper that uses its parameter so. The other integer constexprs are sizes and strides."""
    import ast
    import textwrap

    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError, IndentationError):
        return set(inspect.signature(fn).parameters)  # unreadable: every parameter counts as a shape
    func = next((n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
    if func is None:
        return set()
    params = [a.arg for a in func.args.args + func.args.kwonlyargs]
    glb = getattr(fn, "__globals__", {})
    shapes, assigned = set(), []
    for node in ast.walk(func):
        if isinstance(node, ast.Call):
            callee = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            for kw in node.keywords:
                if kw.arg in _SHAPE_KEYWORDS:
                    shapes |= _names_in(kw.value)
            if callee in _SHAPE_CALLS or callee in _SHAPE_FROM:
                for arg in node.args[_SHAPE_FROM.get(callee, 0):]:
                    shapes |= _names_in(arg)
                continue
            helper = glb.get(callee) if isinstance(node.func, ast.Name) else None
            inner = getattr(helper, "fn", None)
            if depth > 0 and inner is not None and hasattr(inner, "__code__"):
                used = shape_names(inner, depth - 1)
                names = list(inspect.signature(inner).parameters)
                for i, arg in enumerate(node.args):
                    if i < len(names) and names[i] in used:
                        shapes |= _names_in(arg)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            assigned.append((set().union(*(_names_in(t) for t in targets)), _names_in(node.value)))
    for _ in range(len(assigned) + 1):  # a local made from a constexpr and used as a shape
        before = len(shapes)
        for targets, sources in assigned:
            if targets & shapes:
                shapes |= sources
        if len(shapes) == before:
            break
    return shapes & set(params)


def stride_constexprs(fn, args, kwargs) -> dict:
    """The integer ``tl.constexpr`` arguments of one launch of kernel ``fn`` that are not block shapes
    (:func:`shape_names`) and not 1: sizes and strides the kernel was given as constants. A product of one
    with a program id in 32 bits wraps past 2^31 elements as a run-time stride's does."""
    try:
        constexpr_names = constexpr_parameters(fn)
        params = inspect.signature(fn).parameters
        bound = inspect.signature(fn).bind_partial(*args, **{k: v for k, v in kwargs.items() if k in params})
    except Exception:  # another Triton's layout, or arguments it cannot bind: nothing to add
        return {}
    out = {}
    for name, value in bound.arguments.items():
        value = getattr(value, "value", value)
        if name in constexpr_names and type(value) is int and value not in (0, 1):
            out[name] = value
    if not out:
        return {}
    shapes = shape_names(fn)  # read at every launch: no table a reader's cell could fill decides it
    return {name: value for name, value in out.items() if name not in shapes}


def constexpr_parameters(fn) -> set:
    """The parameters of kernel ``fn`` annotated ``tl.constexpr``."""
    from triton.runtime.jit import _normalize_ty

    return {name for name, ty in inspect.get_annotations(fn).items() if _normalize_ty(ty) == "constexpr"}


def wrapping_constexpr_offsets(fn, args, kwargs, within_head: bool = False, rule=None,
                               exempt: frozenset = frozenset()) -> bool:
    """:func:`wrapping_offsets` once more, on the kernel lowered with its constexpr sizes and strides
    (:func:`stride_constexprs`) as run-time integers: ``row * STRIDE`` in 32 bits wraps whether STRIDE was
    given at run time or as a constant. Where the kernel does not lower so (a constexpr the code needs as a
    constant), each such argument is tried alone; one that cannot be lowered so is left out. ``within_head``
    and ``exempt``: as :func:`wrapping_offsets`'s. ``rule``: another rule to read the TTIR with
    (:func:`wrapping_masks`)."""
    strides = stride_constexprs(fn, args, kwargs)
    if not strides:
        return False
    groups = [list(strides)] + ([[name] for name in strides] if len(strides) > 1 else [])
    unavailable = _STATE["unavailable"]
    try:
        for names in groups:
            problem, ttir = lower(fn, args, kwargs, runtime=names)
            if ttir and not problem:
                if (rule(ttir) if rule is not None else
                        wrapping_offsets(ttir, within_head=within_head, exempt=exempt)):
                    return True
                if len(names) == len(strides):
                    return False
        return False
    finally:
        _STATE["unavailable"] = unavailable  # a lowering refused here says nothing of the front end


def _first_lines(exc) -> str:
    """The compiler's complaint, shortened: its last line (the error), without long array dumps."""
    import re

    text = str(exc).strip()
    lines = [line for line in text.splitlines() if line.strip()]
    error = lines[-1].strip() if lines else type(exc).__name__
    error = re.sub(r"\[\[.*", "[...]", error) if len(error) > 200 else error
    return error[:240]


# ---- 32-bit offsets, read from the TTIR ----------------------------------------------------------------

#: ``tt.func private @mod._mk__i32_i32(%row: i32 loc(...), ...) -> tensor<128xi1> ... {``: a function's name and
#: header; ``tt.call @mod._mk__i32_i32(%row, %n) : ...``: a call of one.
#: Triton 3.6 quotes a name that holds constant arguments: ``@"mod._mk__i32__(1,)cconstexpr_16_"`` (the quotes
#: are kept out of the name matched).
_FUNC = re.compile(r'^\s*tt\.func (?:\w+ )?@"?([\w.$-]+?(?:__\([\d, ]*\)[\w.$-]*)*)"?\((?=%|\))')
_CALL = re.compile(r'^tt\.call @"?([\w.$-]+?(?:__\([\d, ]*\)[\w.$-]*)*)"?\((?=%|\))')
_PARAM = re.compile(r"(%[\w.$-]+): ")
#: Triton's own functions (``tl.cdiv``, the combine functions of ``tl.max``, ``tl.sum``): the rules read them as
#: calls (see ``_CDIV_CALL``), never inline them.
_LIBRARY = "triton.language."


def _functions(ttir: str) -> dict:
    """The module's functions: name -> (parameters, lines of the body before its first unreachable block)."""
    lines = ttir.splitlines()
    found: dict = {}
    for i, line in enumerate(lines):
        m = _FUNC.match(line)
        if m is None:
            continue
        indent = len(line) - len(line.lstrip())
        head = line.split(") ->")[0].split(") attributes")[0]
        body = []
        for inner in lines[i + 1:]:
            if inner.strip().startswith("}") and len(inner) - len(inner.lstrip()) == indent:
                break
            if inner.strip().startswith("^"):  # ^bb1: // no predecessors (after the return: never run)
                break
            body.append(inner)
        found[m.group(1)] = ([name for name in _PARAM.findall(head)], body)
    return found


def inline_calls(ttir: str, depth: int = 8) -> str:
    """The TTIR with the kernel's calls of its own ``@triton.jit`` functions replaced by their bodies (up to
    ``depth`` calls deep), each body's values renamed apart, its parameters bound to the call's arguments and the
    call's results to the values it returns: a product computed in a helper (``mask = _mk(row, n_cols, cols)``)
    is the kernel's own to the rules that read the kernel's function. The front end keeps a helper as a function
    of its own (``tt.call``) until the compiler's inliner runs, and for ever where it is marked noinline.
    Triton's own functions (``tl.cdiv``, reductions' combine functions) stay calls."""
    lines = kernel_lines(ttir)
    if not lines:
        return ttir
    funcs = _functions(ttir)
    callees = {name for name in funcs if not name.startswith(_LIBRARY)}

    def called(line: str) -> str | None:
        code = line.split(" loc(")[0].strip()
        code = code.split(" = ", 1)[1] if code.startswith("%") and " = " in code else code
        m = _CALL.match(code)
        return m.group(1) if m and m.group(1) in callees else None

    if not any(called(line) for line in lines[1:]):
        return ttir
    count = [0]
    value = re.compile(r"%[\w.$-]+(?:#\d+)?")

    def expand(body: list, rename, level: int) -> tuple[list, list]:
        """``body``'s lines with values renamed by ``rename`` and calls inlined; and the values its first
        ``tt.return`` returns (renamed)."""
        out, returned, results_of = [], None, {}

        def name_of(token: str) -> str:
            return results_of.get(token) or rename(token)

        scopes: list = []  # results_of as each open region found it: TTIR reuses names across regions
        for line in body:
            code = line.split(" loc(")[0].rstrip()
            if not code.strip():
                continue
            indent = code[:len(code) - len(code.lstrip())]
            stripped = code.strip()
            if stripped.startswith("}") and scopes:  # a region closes (and "} else {" opens the next)
                results_of = scopes.pop()
            if stripped.startswith("%") and " = " in stripped:  # a name defined again is no call's result
                for result in stripped.split(" = ", 1)[0].split(","):
                    name = result.strip().split(":")[0]
                    for key in [k for k in results_of if k == name or k.startswith(name + "#")]:
                        del results_of[key]
            if stripped.endswith("{"):
                scopes.append(dict(results_of))
            text = value.sub(lambda m: name_of(m.group(0)), stripped)
            callee = called(line) if level < depth else None
            if text.startswith("tt.return"):
                if returned is None:
                    returned = value.findall(text.split(" : ")[0])
                continue
            if callee is None:
                out.append(indent + text)
                continue
            head, _, call = text.partition(" = ") if text.startswith("%") else ("", "", text)
            # the arguments after the callee's name, which Triton 3.6 writes with parentheses in it
            # (``@"mod._store_tile__Pfp32_..._(7,)cconstexpr_1_"(%c_ptr, ...)``: round 23's h24-h26 on a GPU)
            args = value.findall(re.sub(r'@"[^"]*"|@[\w.$-]+', "@", call, count=1).split(")")[0])
            params, inner = funcs[callee]
            count[0] += 1
            suffix = f"$in{count[0]}"
            bound = dict(zip(params, args))

            def inner_rename(token: str, bound=bound, suffix=suffix) -> str:
                if token in bound:
                    return bound[token]
                base, _, index = token.partition("#")
                return base + suffix + ("#" + index if index else "")

            lines_in, values = expand(inner, inner_rename, level + 1)
            out += [indent + "  " + line_in.lstrip() for line_in in lines_in]
            # the call's results: %r (one) or %r:2 (used as %r#0, %r#1); bound to what the body returns
            orig_head = line.split(" loc(")[0].strip().split(" = ", 1)[0] if head else ""
            if orig_head:
                name, _, n = orig_head.partition(":")
                names = [f"{name}#{i}" for i in range(int(n))] if n.isdigit() else [name]
                for result, returned_value in zip(names, values):
                    results_of[result] = returned_value
        return out, returned or []

    lines_out, _ = expand(lines[1:-1], lambda token: token, 0)
    return "\n".join([lines[0]] + lines_out + [lines[-1]])


def wrapping_offsets(ttir: str, any_factor: bool = False, within_head: bool = False,
                     exempt: frozenset = frozenset()) -> bool:
    """Whether an address of the kernel (``tt.addptr``'s offset) comes from a product in fewer than 64 bits of
    a value computed from ``tl.program_id`` and a size or stride the kernel was given at run time (an integer
    argument: Triton makes one equal to 1 a constant): past 2^31 elements such a product wraps around,
    whatever the result is widened to afterwards. The same rule as the interpreter's count in
    :mod:`gpuperf.grading.algorithm`, read from the compiler's IR, so that it holds on a GPU too. A loop's
    induction variable is made from its lower bound only (a loop from the program's block walks indices made
    from the program id; the keys ``start + tl.arange(0, BLOCK_N)`` of a loop from 0 are not, whatever
    values the loop carries).

    An index is not an offset: a 32-bit product that is widened and then multiplied again in 64 bits (a group
    of tiles ``(pid // per_group) * GROUP_M`` scaled by a block and a stride, a split-K slice's start times
    the column stride) was an index of rows or tiles, and the offset is the 64-bit product.

    ``within_head`` (attention): a block's rows (a program id's value with ``tl.arange`` lanes in it, as
    ``block_m * BLOCK_M + tl.arange(0, BLOCK_M)``) times a stride stays inside one head, like a loop's keys,
    where the same address adds a head offset computed in 64 bits (a program id's value times a size or
    stride): it counts only when no such head offset is there. A product of a program id's value without
    lanes (the head, the batch) counts always.

    ``any_factor``: a 32-bit product of a program id's value with anything (a block size too) counts, the rule
    of L2's one-dimensional kernels (``pid * BLOCK`` must be computed in 64 bits), whatever operations
    (``tl.where``, ``tl.minimum``, casts) the product goes through before it reaches an address.

    ``exempt``: the slice starts of the launch (:func:`slice_starts`), pairs of a grid axis and an integer
    argument whose 32-bit product stays below one dimension of the exercise's tensors. The product of that
    axis's program id and that argument, each as given (through casts only), is then no wrap; it is still a
    program id's value, so a 32-bit product of it (or of an index made from it, ``split * KPS + offs``) with a
    size or stride is one (not with ``any_factor``, L2's rule).

    Masks are read by :func:`wrapping_masks` (its ``any_factor`` is L2's rule for masks). The kernel's own
    ``@triton.jit`` helpers are read as part of it (:func:`inline_calls`)."""
    kernel = kernel_function(inline_calls(ttir))
    if kernel is None:
        return False
    defs = {base_name(r): op for op in kernel.ops for r in op.results}
    # pid: values made from a program id; arg: from an integer argument; wraps: from a 32-bit product of the
    # two; lanes: from tl.arange; rows: a 32-bit product whose program id's factor has lanes (a block's rows
    # times a stride); wide: from a 64-bit product of a program id's value and an argument (a head's offset).
    # A multi-result operation's results are one value here (%r for %r#0 and %r#1).
    # sums: a 32-bit sum carried by a loop whose trip count is a program id's value, adding a size or a program
    # id's value each time round (``for i in range(row): off += stride``): the product ``row * stride`` written
    # as additions. Inside the loop it is like the induction variable (a causal loop's keys); what the loop
    # hands on once it ends (its results) is the product, and wraps as the product does.
    pid, arg, wraps, lanes, rows, wide, sums = set(), set(), set(), set(), set(), set(), set()
    arg.update(kernel.integer_arguments)
    ops = kernel.ops
    sets = (pid, arg, wraps, lanes, rows, wide, sums)
    loops = _enclosing_loops(ops)

    def visit(op: Op, region: Op | None) -> bool:
        operands = [base_name(v) for v in op.values]
        results = {base_name(r) for r in op.results}
        if op.name == "tt.get_program_id":
            pid.update(results)
        if op.name == "tt.make_range":
            lanes.update(results)
        flags = [any(v in s for v in operands) for s in sets]
        if op.name in _QUOTIENTS | {"arith.remsi", "arith.remui"} and len(operands) >= 2:
            # a quotient or remainder wraps only as its dividend does (as the interpreter's count reads it)
            flags[2], flags[4] = operands[0] in wraps, operands[0] in rows
        if op.name in ("arith.muli", "arith.shli") and len(operands) >= 2:
            a, b = operands[0], operands[1]
            factors = [x for x, y in ((a, b), (b, a)) if x in pid and y in arg]
            if any_factor:
                if _narrow(op.text) and (a in pid or b in pid):
                    flags[2] = True
            elif _narrow(op.text):
                if factors and op.name == "arith.muli" and _slice_start(a, b, defs, kernel, exempt):
                    pass  # a slice's start inside one dimension: no wrap, still the program id's value
                elif any(x not in lanes for x in factors):
                    flags[2] = True
                elif factors:
                    flags[4] = True
            elif op.name == "arith.muli":  # 64 bits: an index scaled to an offset, or a head's offset
                flags[2] = flags[4] = flags[6] = False
                flags[5] = flags[5] or bool(factors)
        if op.name in ("arith.addi", "arith.subi") and len(operands) >= 2 and _narrow(op.text) and \
                _loop_sum(operands, loops.get(id(op), ()), pid, arg):
            flags[6] = True
        for s, on in zip(sets, flags):
            if on:
                s.update(results)
        # scf.for's induction variable starts at the lower bound and steps, so it carries the lower bound's
        # taint (a loop from a program id's block walks indices made from it) but never a yielded value's;
        # iter_args(%x = %init) start as init and are carried by the yield
        for new, init in ([op.induction] if op.induction else []) + list(op.carried):
            for s in sets:
                if base_name(init) in s:
                    s.add(new)
        if op.name == "scf.yield" and region is not None:  # its region's results and the loop's carried values
            for s, on in zip(sets, flags):
                if on:
                    s.update(base_name(r) for r in region.results)
                    s.update(new for new, _ in region.carried)
            if flags[6] and region.name in ("scf.for", "scf.while"):  # a loop's sum, handed on: the product
                wraps.update(base_name(r) for r in region.results)
        return False

    walk_to_fixed_point(ops, visit, lambda: tuple(len(s) for s in sets), rounds=8)
    for op in ops:
        operands = [base_name(v) for v in op.values]
        if op.name == "tt.addptr" and len(operands) >= 2 and (operands[1] in wraps or
                                                              (not within_head and operands[1] in rows)):
            return True
        if within_head and op.name in _MEMORY_OPS and operands and operands[0] in rows and operands[0] not in wide:
            return True
    return False


#: Loads: what they read is data, not a value made from the program id that addressed it.
_LOADS = frozenset(("tt.load", "tt.descriptor_load", "tt.descriptor_gather"))
#: Conversions from a float to an integer: a program id's value that went through a float (fp32 holds integers
#: exactly only up to 2^24, fp16 up to 2^11) comes back rounded.
_FLOAT_TO_INT = frozenset(("arith.fptosi", "arith.fptoui"))


def lossy_program_ids(ttir: str) -> bool:
    """Round 24: a program id's value narrowed to an integer of fewer than 32 bits (``pid.to(tl.int16)``: wraps
    past 32,767 programs) or turned into a float and back (``(pid.to(tl.float32) * BLOCK).to(tl.int64)``: rounds
    past 2^24, fp16 past 2^11) that reaches an address: whatever is widened afterwards, the offset is wrong on a
    large enough grid. The kernel's own helpers are read as part of it."""
    kernel = kernel_function(inline_calls(ttir))
    if kernel is None:
        return False
    ops = kernel.ops
    pid: set = set()

    def spread(op: Op, region: Op | None) -> bool:  # every value made from a program id, through any operation
        operands = [base_name(v) for v in op.values]
        if op.name == "tt.get_program_id" or (op.name not in _LOADS and any(v in pid for v in operands)):
            pid.update(base_name(r) for r in op.results)
            pid.update(new for new, init in op.carried if base_name(init) in pid)
        if op.name == "scf.yield" and region is not None and any(v in pid for v in operands):
            pid.update(base_name(r) for r in region.results)
        return False

    walk_to_fixed_point(ops, spread, lambda: len(pid), rounds=8)
    lossy: set = set()

    def visit(op: Op, region: Op | None) -> bool:
        operands = [base_name(v) for v in op.values]
        results = {base_name(r) for r in op.results}
        if op.name == "arith.trunci" and operands and operands[0] in pid:
            m = re.search(r"to (?:tensor<[\dx]*)?i(\d+)", op.text)
            if m and int(m.group(1)) < 32:
                lossy.update(results)
        if op.name in _FLOAT_TO_INT and operands and operands[0] in pid:
            lossy.update(results)
        if any(v in lossy for v in operands):
            lossy.update(results)
            for new, _ in op.carried:
                lossy.add(new)
        if op.name == "scf.yield" and region is not None and any(v in lossy for v in operands):
            lossy.update(base_name(r) for r in region.results)
        return False

    walk_to_fixed_point(ops, visit, lambda: len(lossy), rounds=8)
    return any(op.name == "tt.addptr" and len(op.values) >= 2 and base_name(op.values[1]) in lossy for op in ops)


def _enclosing_loops(ops) -> dict:
    """``id(op)``: the loops that ``op`` lies inside, outermost first, each as ``(loop, bounds)``: an ``scf.for``
    with its lower bound, upper bound and step; an ``scf.while`` with every value its condition region reads
    (what decides its trip count)."""
    found: dict = {}
    stack: list = []
    bounds: dict = {}
    conditions_read: set = set()  # the while loops whose condition region has ended
    for op in ops:
        found[id(op)] = tuple((o, bounds[id(o)]) for o in stack if o.name in ("scf.for", "scf.while"))
        for o in stack:  # a while loop's condition region: from its line to "} do {"
            if o.name == "scf.while" and id(o) not in conditions_read:
                if op.text.startswith("} do {") and stack[-1] is o:
                    conditions_read.add(id(o))
                else:
                    bounds[id(o)] = bounds[id(o)] + tuple(base_name(v) for v in op.values)
        if op.closes_region and stack:
            stack.pop()
        elif op.opens_region:
            stack.append(op)
            bounds[id(op)] = tuple(base_name(v) for v in op.operands[1:4]) if op.name == "scf.for" else ()
    return found


def _loop_sum(operands, loops, pid: set, arg: set) -> bool:
    """A 32-bit addition (or subtraction) in loops (``loops``: the ``(loop, bounds)`` around it,
    :func:`_enclosing_loops`), one of whose bounds is a program id's value (its trip count is one: an
    ``scf.for``'s bounds or step, the values an ``scf.while``'s condition reads), of a value one of those loops
    carries and a size given at run time or a program id's value: a sum that grows with the program id, as
    ``pid * stride`` does (:func:`wrapping_offsets`)."""
    if not loops or not any(v in pid for _, bound in loops for v in bound):
        return False
    carried = {base_name(new) for loop, _ in loops for new, _ in loop.carried}
    a, b = operands[0], operands[1]
    return any(x in carried and (y in arg or y in pid) for x, y in ((a, b), (b, a)))


#: Integer quotients: a program id's value divided by them is a group's index (a remainder is not: ``pid % n``);
#: a size divided by them is a slice of it (``cdiv(K, SPLIT)``) until it is multiplied back (see :func:`wrapping_masks`).
_QUOTIENTS = frozenset(("arith.divsi", "arith.divui", "arith.ceildivsi", "arith.ceildivui", "arith.floordivsi"))
#: Operations a size given at run time stays a size through (``M * N``, ``n_cols - 1``, a cast, a splat).
_SIZE_OPS = frozenset(("arith.muli", "arith.addi", "arith.subi", "arith.extsi", "arith.extui", "arith.trunci",
                       "arith.maxsi", "arith.minsi", "arith.maxui", "arith.minui", "tt.splat", "tt.broadcast",
                       "tt.expand_dims", "arith.index_cast"))
#: Operations a program id's group index stays one through (casts and splats).
_CAST_OPS = frozenset(("arith.extsi", "arith.extui", "arith.trunci", "tt.splat", "tt.broadcast", "tt.expand_dims",
                       "arith.index_cast"))
#: Operations a program id's value keeps the factors multiplied into it through (a block's rows
#: ``pid_m * BLOCK_M + tl.arange(0, BLOCK_M)``, a clamp, a cast).
_KEEP_OPS = frozenset(("arith.addi", "arith.subi", "arith.maxsi", "arith.minsi", "arith.maxui", "arith.minui",
                       "arith.select")) | _CAST_OPS
#: ``tt.call @triton.language.standard.cdiv__i32_c16(%n)``: ``tl.cdiv``, its constant arguments in its name.
#: Triton 3.6 names it ``@"triton.language.standard.cdiv__i32__(1,)cconstexpr_16_"``: the types of the run-time
#: arguments, then the places and values of the constant ones (:func:`_cdiv_arguments`).
_CDIV_CALL = re.compile(r'^tt\.call @"?[\w.]*\bcdiv__(\w+?(?:__\([\d, ]*\)\w*)?)"?\((?=%|\))')


def _cdiv_arguments(spec: str, operands: list) -> list:
    """``tl.cdiv``'s two arguments, ``("const", value)`` or ``("value", operand)``, from the name's arguments
    part (``i32_c16`` in Triton 3.9; ``i32__(1,)cconstexpr_16_`` or ``i32_i32__`` in 3.6) and the call's
    operands."""
    given = iter(operands)
    if "__(" not in spec:
        args = []
        # Triton 3.6 names a call of run-time arguments only ``cdiv__i32_i32__``: the trailing "__" is no argument
        for part_name in (name for name in spec.split("_") if name):
            constant = re.fullmatch(r"c(-?\d+)", part_name)
            args.append(("const", int(constant.group(1))) if constant else ("value", next(given, None)))
        return args
    types, rest = spec.split("__(", 1)
    places = [int(i) for i in re.findall(r"\d+", rest.split(")", 1)[0])]
    values = [int(v) for v in re.findall(r"constexpr_(-?\d+)", rest)]
    if len(places) != len(values):
        return []
    consts = dict(zip(places, values))
    total = len([t for t in types.split("_") if t]) + len(places)
    return [("const", consts[i]) if i in consts else ("value", next(given, None)) for i in range(total)]
#: ``arith.constant 16 : i32`` or ``arith.constant dense<16> : tensor<...>``: an integer constant's value.
_INT_CONSTANT = re.compile(r"^arith\.constant (?:dense<)?(-?\d+)>? : (?:tensor<[\dx]*)?i\d+")

#: The factors of a size or of a program id's value, as a constant times a product of run-time values (each
#: to a power, negative where it divided): ``cdiv(n_cols, 16)`` is ``n_cols / 16``, ``cdiv(K, SPLIT)``
#: ``K * SPLIT^-1``; a size's own run-time value is not named in it (it is "one size").
_Net = tuple  # (Fraction, frozenset of (root, power))


def _net(const=1) -> _Net:
    from fractions import Fraction

    return (Fraction(const), frozenset())


def _net_times(a: _Net, b: _Net) -> _Net:
    powers = dict(a[1])
    for root, power in b[1]:
        powers[root] = powers.get(root, 0) + power
    return (a[0] * b[0], frozenset((root, power) for root, power in powers.items() if power))


def _net_inverse(a: _Net) -> _Net:
    return (1 / a[0], frozenset((root, -power) for root, power in a[1]))


def _divided(a: _Net) -> bool:
    """Still divided: a slice of a size (a constant below 1, or a run-time divisor not multiplied back)."""
    return a[0] < 1 or any(power < 0 for _, power in a[1])


def _larger(a: _Net | None, b: _Net | None) -> _Net | None:
    """The net of a sum, a clamp or a choice of two: the one that grows more (no divisor left first)."""
    if a is None or b is None:
        return a if b is None else b
    if _divided(a) != _divided(b):
        return b if _divided(a) else a
    return a if a[0] >= b[0] else b


def wrapping_masks(ttir: str, any_factor: bool = False, grid: tuple | None = None,
                   exempt: frozenset = frozenset()) -> bool:
    """Whether a mask of a load, a store or an atomic of the kernel comes from a product in fewer than 64 bits of
    a value computed from ``tl.program_id`` (a row, a block's rows) and a size or stride the kernel was given at
    run time (an integer argument, or a product or sum of them: ``n_cols``, ``N``, ``M * N``), the rule of L3 to
    L6: ``row * n_cols + cols < (row + 1) * n_cols`` or ``rows * N + cols < M * N`` computed in 32 bits wraps past
    2^31 elements, and the mask then drops or lets through the wrong lanes, although the addresses are 64-bit.

    ``any_factor``: a 32-bit product of a program id's value with anything counts, a block size too: the rule of
    L2's one-dimensional kernels (round 12's 08: 64-bit addresses and ``lanes < n - pid * BLOCK``; past 2^31
    elements ``pid * BLOCK`` wraps, ``n - start`` is huge, and the last block reads and writes past the end).
    The two exercises differ only in what a product of the program id and a constant is: in a one-dimensional
    kernel every value a mask compares is a position in the vector, so ``pid * BLOCK`` is one and passes 2^31
    with the vector; in a kernel of rows or tiles ``pid_m * BLOCK_M`` is a row index, compared to M, and only
    its product with a size (a row's length, N) is a position in the tensor. Both follow a program id's value
    through every operation, as :func:`wrapping_offsets` does: a value loaded from an address made from it,
    and the results of a branch or a loop whose condition or bounds come from it (a row rebuilt bit by bit in
    ``if pid & (1 << b):`` branches is the program id still).

    Only products that grow with the tensor count. A size divided (``cdiv(K, SPLIT)``, ``n >> 4``) is a slice:
    the program id times it (a split-K slice's start, ``pid_k * cdiv(K, SPLIT)``, or
    ``pid_k * cdiv(cdiv(K, BLOCK_K), SPLIT) * BLOCK_K``) is bounded by one dimension. A quotient multiplied
    back by what divided it is a size again: ``cdiv(n_cols, 16) * 16`` (the row length padded to whole blocks)
    or ``tiles_n * BLOCK_N`` grows with the tensor as ``n_cols`` does (round 15's 03, 04), and so does
    ``(row * cdiv(n_cols, 16)) * 16`` or ``(pid_m * BLOCK_M) * tiles_n`` with BLOCK_M at least BLOCK_N: the
    constants and run-time values multiplied into a program id's value and into a size are counted against
    those that divided the size. A size rounded (``n & -16``, ``n - n % 16``) stays a size. A product with a
    constant alone (``pid_m * BLOCK_M``, ``(pid // per_group) * GROUP_M`` with GROUP_M a constexpr) is a row or
    tile index, bounded by the size it is compared to; and masks without such a product (``cols < n_cols``,
    ``rows < M``, ``offs_k < K - k * BLOCK_K``, a causal ``q_idx >= k_idx``) are fine.

    A program id divided (a group's index, ``pid // per_group``) times a size is exempt only where the size is a
    factor of the divisor (:func:`_group_factors`): ``(pid // (GROUP_M * tiles_n)) * GROUP_M``, Triton's grouped
    order with GROUP_M given at run time, is at most ``pid``. Any other product of one with a size grows with
    the tensor as the program id's own does: ``pid // tiles_n`` is the tile row, and ``(pid // tiles_n) * N``
    wraps as ``rows * N`` does (round 14's 08). A remainder gets no exemption: ``pid % n_rows`` is bounded only
    by a size given at run time, and is the row itself where the grid has n_rows programs (round 14's 07).

    The kernel's own ``@triton.jit`` helpers are read as part of it (:func:`inline_calls`): ``mask = _mk(row,
    n_cols, cols)`` with the product inside ``_mk`` is the kernel's product.

    ``grid``: the launch's grid (three sizes), where known. A split index times a size rounded to whole blocks
    (split-K with its split count folded to 1, below) is exempt only on an axis of the grid with one program:
    with a split count of 1 the program id there is 0. On an axis of several programs the id is a block's index
    however the kernel makes its rows (``pid_m.to(tl.int64) * bm`` with ``bm`` given at run time, round 19's
    01) and whatever size was rounded. Without a grid, the axes :func:`_block_axes` does not find are split
    indices.

    ``exempt``: as :func:`wrapping_offsets`'s (not with ``any_factor``): the product is a position inside one
    dimension, as a row index is, and a product of it with a size wraps."""
    kernel = kernel_function(inline_calls(ttir))
    if kernel is None:
        return False
    # size: a size given at run time (or a slice of one) and its net (see _Net); pid: a program id's value and
    # the constants multiplied into it; part: a program id's value times a slice of a size, not yet a position
    size: dict[str, _Net] = {name: _net() for name in kernel.integer_arguments}
    pid: dict[str, _Net] = {}
    part: set = set()
    # side: a program id of axis 1 or 2 itself, through casts only (a split index; never a block's rows made from
    # it, ``pid_m * BLOCK_M + tl.arange(0, BLOCK_M)``); rounded: a size's quotient multiplied back by constants
    side, rounded = set(), set()
    if grid is not None and len(grid) >= 3:  # the axes of one program only (a split count of 1)
        blocks = {name for name, n in (("y", grid[1]), ("z", grid[2])) if n != 1}
    else:
        blocks = _block_axes(kernel.ops)  # the axes whose program id is a block's index: no split index
    wraps, const, small = set(), {}, set()
    # group: a program id divided (through casts), with the factors of what divided it (see _group_factors)
    group: dict[str, frozenset] = {}
    ops = kernel.ops
    defs = {base_name(r): op for op in ops for r in op.results}

    def factors(value: str) -> _Net:
        """``value`` as a multiplier or divisor: its constant, or the run-time values it is a product of."""
        value = _root(value, defs)
        if value in const:
            return _net(abs(const[value]) or 1)
        op = defs.get(value)
        if op is not None and op.name == "arith.muli" and len(op.operands) >= 2:
            product = _net_times(factors(base_name(op.operands[0])), factors(base_name(op.operands[1])))
            if not (value in size and not _divided(size[value]) and _divided(product)):
                return product
        if value in size and _divided(size[value]):
            return size[value]
        return (_net()[0], frozenset(((value, 1),)))

    def divisor(value: str | None, constant: int | None, where: str) -> _Net:
        """What a size is divided by: a constant 1 is a split count given as 1 (Triton makes an integer argument
        equal to 1 a constant, and a constexpr SPLIT of 1 is one), whose slice is the whole size and which
        nothing multiplies back: it stays a slice, as ``cdiv(K, SPLIT)`` does for any other SPLIT."""
        if value is not None and _root(value, defs) not in const:
            return factors(value)
        constant = abs(const[_root(value, defs)] if value is not None else constant) or 1
        if constant == 1:
            return (_net()[0], frozenset(((f"1 at {where}", 1),)))
        return _net(constant)

    def times(a: _Net, value: str) -> _Net:
        """A size's or a program id's net times ``value`` (a constant or a size); times a constant 1, a split
        count of 1 that divided it is multiplied back (``cdiv(n, SPLIT) * SPLIT`` is n)."""
        if const.get(_root(value, defs)) == 1:
            ones = sorted(root for root, power in a[1] if isinstance(root, str) and root.startswith("1 at "))
            if ones:
                return _net_times(a, (_net()[0], frozenset(((ones[0], 1),))))
        return _net_times(a, factors(value))

    def visit(op: Op, region: Op | None) -> bool:
        operands = [base_name(v) for v in op.values]
        results = {base_name(r) for r in op.results}

        def set_size(net):
            for r in results:
                size[r] = net

        if op.name == "tt.get_program_id":
            for r in results:
                pid[r] = _net()
            if not op.text.startswith("tt.get_program_id x") and \
                    (op.text.split()[1] if len(op.text.split()) > 1 else "y") not in blocks:
                side.update(results)
        if op.name == "arith.constant":
            m = _INT_CONSTANT.match(op.text)
            for r in results:
                const[r] = int(m.group(1)) if m else 0
        elif op.name in _CAST_OPS and operands and operands[0] in const:
            for r in results:
                const[r] = const[operands[0]]
        elif op.name in ("arith.muli", "arith.addi", "arith.subi") and len(operands) >= 2 and \
                operands[0] in const and operands[1] in const:  # constants folded: SPLIT * BLOCK_K as constexprs
            a, b = const[operands[0]], const[operands[1]]
            for r in results:
                const[r] = a * b if op.name == "arith.muli" else a + b if op.name == "arith.addi" else a - b
        known = [v for v in operands if v in size]
        plain = all(v in size or v in const or v in small for v in operands)
        cdiv = _CDIV_CALL.match(op.text)
        if cdiv and operands and not any(v in pid for v in operands):  # tl.cdiv(n, d): a quotient
            args = _cdiv_arguments(cdiv.group(1), operands)
            if len(args) == 2 and args[0][0] == "value" and args[0][1] in size and args[1][1] is not None:
                by = divisor(None, args[1][1], op.text) if args[1][0] == "const" else divisor(args[1][1], None, op.text)
                set_size(_net_times(size[args[0][1]], _net_inverse(by)))
                rounded.difference_update(results)
        elif known and plain and op.name == "arith.muli" and len(operands) >= 2:
            a, b = operands[0], operands[1]
            net = times(size[a], b) if a in size else times(size[b], a)
            if a in size and b in size and (not _divided(size[a]) or not _divided(size[b])) and _divided(net):
                net = _net()  # a size times a slice of another still grows with the tensor
            set_size(net)
            sized = a if a in size else b
            if (a in const or b in const) and (_divided(size[sized]) or sized in rounded) and not _divided(net):
                rounded.update(results)  # cdiv(K, SPLIT * BLOCK_K) * BLOCK_K with SPLIT = 1: see below
        elif known and plain and op.name in _SIZE_OPS:
            net = None
            for v in known:
                net = _larger(net, size[v])
            set_size(net)
            if all(v in rounded for v in known):
                rounded.update(results)
        elif op.name == "arith.select" and len(operands) >= 3 and any(v in size for v in operands[1:]) and \
                all(v in size or v in const or v in small for v in operands[1:]):
            set_size(_larger(size.get(operands[1]), size.get(operands[2])))
        elif op.name in _QUOTIENTS and len(operands) >= 2 and operands[0] in size and \
                (operands[1] in size or operands[1] in const):  # n // 16: a slice of n
            set_size(_net_times(size[operands[0]], _net_inverse(divisor(operands[1], None, op.text))))
        elif op.name in ("arith.shrsi", "arith.shrui", "arith.shli") and len(operands) >= 2 and \
                operands[0] in size and operands[1] in const and 0 <= const[operands[1]] < 63:
            scale = _net(2 ** const[operands[1]])
            set_size(_net_times(size[operands[0]], scale if op.name == "arith.shli" else _net_inverse(scale)))
        elif op.name in ("arith.andi", "arith.ori") and len(operands) >= 2 and \
                any(x in size and y in const for x, y in ((operands[0], operands[1]), (operands[1], operands[0]))):
            value, bits = next((x, y) for x, y in ((operands[0], operands[1]), (operands[1], operands[0]))
                               if x in size and y in const)
            mask_value = const[bits]
            if op.name == "arith.ori" or mask_value < 0:  # n | 15, n & -16: the size rounded
                set_size(size[value])
            else:  # n & 15: at most the constant
                small.update(results)
        elif op.name in ("arith.remsi", "arith.remui") and len(operands) >= 2 and operands[0] in size and \
                operands[1] in const:  # n % 16: at most the constant
            small.update(results)

        # a program id's value: through every operation (below: the factors multiplied into it)
        from_pid = [v for v in operands if v in pid]
        if from_pid:
            net = None
            if op.name in _KEEP_OPS:
                for v in from_pid:
                    net = _larger(net, pid[v])
            for r in results:
                pid[r] = net if net is not None else _net()
            if op.name in _KEEP_OPS and any(v in part for v in from_pid):
                part.update(results)
            if op.name in _CAST_OPS and all(v in side for v in from_pid):
                side.update(results)
        if op.name in _QUOTIENTS and len(operands) >= 2 and operands[0] in pid:
            factors_of = _group_factors(operands[1], defs) | group.get(operands[0], frozenset())
            for r in results:
                group[r] = group.get(r, frozenset()) | factors_of
        elif op.name in _CAST_OPS and operands and operands[0] in group:
            for r in results:
                group[r] = group.get(r, frozenset()) | group[operands[0]]
        if op.name in ("arith.muli", "arith.shli") and len(operands) >= 2 and \
                (operands[0] in pid or operands[1] in pid):
            a, b = operands[0], operands[1]
            narrow = _narrow(op.text)
            if any_factor:
                if narrow:
                    wraps.update(results)
            elif op.name == "arith.shli":
                if (a in size or b in size) and narrow:  # a shift by (or of) a size: a product with it
                    wraps.update(results)
                elif b in const and 0 <= const[b] < 63 and a in pid:
                    scale = _net(2 ** const[b])
                    grown = _net_times(pid[a], scale)
                    if a in part and not _divided(grown) and narrow:
                        wraps.update(results)
                    for r in results:
                        pid[r] = grown
                    if a in part:
                        part.update(results)
            else:
                x, y = (a, b) if a in pid and b not in pid else (b, a) if b in pid and a not in pid else (None, None)
                if x is not None and y in size and _slice_start(x, y, defs, kernel, exempt):
                    for r in results:  # a slice's start inside one dimension: a position, as a row is
                        pid[r] = pid[x]
                elif x is not None and y in size:
                    grown = times(pid[x], y)
                    if _root(y, defs) in group.get(x, ()):  # a group's first row: at most the program id
                        for r in results:
                            pid[r] = _net()
                    elif x in side and y in rounded and x not in part:
                        # a split index (axis 1 or 2, the program id itself) times a slice rounded up to whole
                        # blocks, whose split count the compiler folded away (SPLIT = 1): a slice's start, as
                        # below; a block's rows on axis 1 times a padded width is a position (round 16's 12)
                        for r in results:
                            pid[r] = (_net()[0], frozenset((("split", 1 - 2),)))
                        part.update(results)
                    elif not _divided(grown):
                        if narrow:
                            wraps.update(results)
                    else:  # times a slice of a size: a slice's start, until multiplied back
                        for r in results:
                            pid[r] = grown
                        part.update(results)
                elif x is not None and y in const:
                    grown = times(pid[x], y)
                    if x in part and not _divided(grown) and narrow:
                        wraps.update(results)
                    for r in results:
                        pid[r] = grown
                    if x in part:
                        part.update(results)
        if any(v in wraps for v in operands):
            wraps.update(results)
        for new, init in ([op.induction] if op.induction else []) + list(op.carried):
            init = base_name(init)
            if init in pid:
                pid[new] = pid[init]
            if init in part:
                part.add(new)
            if init in wraps:
                wraps.add(new)
        if op.name == "scf.yield" and region is not None:
            outs = [base_name(r) for r in region.results] + [new for new, _ in region.carried]
            if any(v in pid for v in operands):
                for r in outs:
                    pid.setdefault(r, _net())
            if any(v in wraps for v in operands):
                wraps.update(outs)
        return False

    def found():
        return (len(pid), len(size), len(group), len(wraps), len(const), len(part), len(small), len(side),
                len(rounded),
                hash(frozenset(size.items())), hash(frozenset(pid.items())))

    walk_to_fixed_point(ops, visit, found, rounds=8)
    for op in ops:
        where = _MASK_OPERAND.get(op.name)
        if where is not None and len(op.values) > where and base_name(op.values[where]) in wraps:
            return True
    return False


def _block_axes(ops) -> set:
    """The grid axes (``y``, ``z``) whose program id the kernel uses as a block's or tile's index, not as a split
    index (see :func:`wrapping_masks`): the program id itself (through casts) times or shifted by a constant
    (``pid_m * BLOCK_M``, ``pid_m << 5``), or a loop's bound; or a value computed from it divided, shifted right
    or taken a remainder of (a tile's rows got back from a flat index, ``tile_start // width``). A split index
    is only multiplied by its slice of K (round 17's 13: M's tiles on axis 1 times a padded tile of C). Only a
    value built from the program id by products and sums (``pid * (BLOCK * width)``) is a flat index whose
    quotient is a block's rows; one that went through a difference or a minimum is a length or a bound
    (``(min(k_start + per, K) - k_start) // BLOCK_K``, a split's count of blocks of K)."""
    axis, derived, const, found = {}, {}, set(), set()
    pure: set = set()  # derived values made from the program id by casts, products and sums only
    for _ in range(2):  # twice: values carried around a loop
        for op in ops:
            operands = [base_name(v) for v in op.operands]
            results = [base_name(r) for r in op.results]
            if op.name == "tt.get_program_id" and not op.text.startswith("tt.get_program_id x"):
                name = op.text.split()[1] if len(op.text.split()) > 1 else "y"
                for r in results:
                    axis[r] = derived[r] = name
                    pure.add(r)
                continue
            if op.name == "arith.constant":
                const.update(results)
            bare = [axis[v] for v in operands if v in axis]
            from_pid = [derived[v] for v in operands if v in derived]
            if bare and (op.name in _CAST_OPS or (
                    op.name not in ("arith.muli", "arith.shli", "scf.for") and len(set(bare)) == 1
                    and all(v in axis or v in const for v in operands))):
                # the program id itself, through casts or any operation with constants only
                # (``tl.maximum(pid_m, 0)``, ``pid_m + 0``): a function of the id alone (round 18's 07)
                for r in results:
                    axis[r] = bare[0]
            elif bare and op.name in ("arith.muli", "arith.shli") and \
                    any(v in const for v in operands if v not in axis):
                found.update(bare)
            elif bare and op.name == "scf.for":
                found.update(bare)
            if from_pid and op.name in _QUOTIENTS | {"arith.remsi", "arith.remui", "arith.shrsi", "arith.shrui"} \
                    and operands and operands[0] in pure:
                found.add(derived[operands[0]])
            if from_pid:
                for r in results:
                    derived[r] = from_pid[0]
                if op.name in _CAST_OPS | {"arith.muli", "arith.shli", "arith.addi"} and \
                        all(v in pure for v in operands if v in derived):
                    pure.update(results)
            for new, init in ([op.induction] if op.induction else []) + list(op.carried):
                if base_name(init) in derived:
                    derived[base_name(new)] = derived[base_name(init)]
                    if base_name(init) in pure:
                        pure.add(base_name(new))
    return found


def _root(value: str, defs: dict) -> str:
    """``value`` before the casts and splats that made it (``%GROUP_M`` for ``arith.extsi %GROUP_M``)."""
    for _ in range(16):
        op = defs.get(value)
        if op is None or op.name not in _CAST_OPS or not op.operands:
            break
        value = base_name(op.operands[0])
    return value


def _group_factors(divisor: str, defs: dict) -> frozenset:
    """The values ``divisor`` is a product of (itself, and the factors of its 32- or 64-bit products, through
    casts): ``x // d`` times one of them is at most ``x`` (``(pid // (G * n)) * G <= pid / n``), so the product
    grows with the tensor no more than the program id's value ``x`` it was made from (a persistent kernel's tile
    index is one too)."""
    found, todo = set(), [divisor]
    while todo and len(found) < 64:
        value = _root(todo.pop(), defs)
        if value in found:
            continue
        found.add(value)
        op = defs.get(value)
        if op is not None and op.name == "arith.muli":
            todo += [base_name(v) for v in op.operands[:2]]
    return frozenset(found)


#: The position of the mask among the operands of the TTIR operations that take one: ``tt.load %ptr, %mask,
#: %other``, ``tt.store %ptr, %value, %mask``, ``tt.atomic_rmw <op>, <sem>, <scope>, %ptr, %value, %mask``.
_MASK_OPERAND = {"tt.load": 1, "tt.store": 2, "tt.atomic_rmw": 2}

#: The TTIR operations that read or write memory at a tensor of pointers (their first operand).
_MEMORY_OPS = frozenset(("tt.load", "tt.store", "tt.atomic_rmw", "tt.atomic_cas"))


def slice_starts(grid: tuple, integers: dict, shapes) -> frozenset:
    """The slice starts of one launch: the pairs ``(axis, name)`` of a grid axis (``x``, ``y``, ``z``) and an
    integer argument of the kernel whose product, the program id of that axis times the argument's value, stays
    below the longest single dimension of the exercise's tensors in every program of the launch:
    ``(programs on the axis - 1) * value < longest``. Such a product starts a slice of one dimension (split-KV's
    ``split * KEYS_PER_SPLIT``, below N_k: round 20's h11), so where 32-bit positions along that dimension do
    not wrap, it does not either. A head's offset ``pid_bh * N_q`` passes only in a launch whose other
    dimensions are longer than all heads' queries together; a case of the grade where they are not refuses it.

    ``grid``: the launch's three sizes. ``integers``: the kernel's integer arguments by name, as launched (others
    are left out; negative ones too). ``shapes``: the shapes of the exercise's own tensors, as the grader made
    them (a tensor the reader made or reshaped may be one long dimension of every element: its shape is not
    read)."""
    longest = max((int(n) for shape in shapes for n in shape), default=0)
    return frozenset((axis, name) for axis, programs in zip("xyz", grid) for name, value in integers.items()
                     if isinstance(value, int) and not isinstance(value, bool) and value >= 0 and programs >= 1
                     and (programs - 1) * value < longest)


def _slice_start(a: str, b: str, defs: dict, kernel, exempt: frozenset) -> bool:
    """Whether ``a * b`` (in either order) is a program id times an integer argument of the kernel, each as given
    (through casts only), whose pair is in ``exempt`` (see :func:`slice_starts`)."""
    if not exempt:
        return False
    arguments = set(kernel.integer_arguments)
    for x, y in ((a, b), (b, a)):
        pid, arg = _root(x, defs), _root(y, defs)
        op = defs.get(pid)
        if op is None or op.name != "tt.get_program_id" or arg in defs or arg not in arguments:
            continue
        words = op.text.split()
        if len(words) > 1 and (words[1], arg.lstrip("%")) in exempt:
            return True
    return False


def _narrow(body: str) -> bool:
    """The op's result type (after the last " : ") is an integer of fewer than 64 bits."""
    import re

    kind = body.rsplit(" : ", 1)[-1]
    m = re.search(r"i(\d+)>?\s*$", kind.strip())
    return bool(m) and int(m.group(1)) < 64
