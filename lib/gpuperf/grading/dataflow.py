"""Where a kernel's values go, read from its TTIR (Triton's IR, made on any machine by
:func:`gpuperf.grading.frontend.lower`): a tile product (``tl.dot``) whose result never reaches memory was
computed to be counted, not used. The interpreter counts every ``tl.dot``'s multiply-adds; this says which of
them the kernel stores."""

from __future__ import annotations

from gpuperf.grading.kernel_ir import Op, kernel_function, walk_to_fixed_point

_WRITES = ("tt.store", "tt.atomic_rmw", "tt.atomic_cas", "tt.descriptor_store", "tt.descriptor_reduce")


def _reaches_a_write(ops: tuple[Op, ...], seed: str) -> bool:
    """Whether value ``seed`` flows (through any operation, a loop's carried values and its yields, position
    by position) into an operand of a store or an atomic."""
    live = {seed}

    def visit(op: Op, region: Op | None) -> bool:
        hit = any(v in live for v in op.operands)
        if hit and op.name in _WRITES:
            return True
        # a loop's results come from its yield; a reduction's from its operands (round 33: tl.sum of a product)
        if hit and (not op.opens_region or op.name == "scf.if" or op.combines):
            live.update(op.results)
        for new, init in op.carried:
            if init in live:
                live.add(new)
        if op.name == "scf.yield" and region is not None:  # position i: the region's result i, carried value i
            for i, v in enumerate(op.operands):
                if v in live:
                    live.update(region.results[i:i + 1])
                    live.update(new for new, _ in region.carried[i:i + 1])
        return False

    return walk_to_fixed_point(ops, visit, lambda: len(live), rounds=len(ops) + 1)


def unstored_dots(ttir: str) -> int:
    """How many of the kernel's own ``tl.dot`` products (``tt.dot`` in its public function, its own helpers
    read as part of it) never reach a store or an atomic: their multiply-adds are done for nothing (0 when the
    TTIR is empty)."""
    from gpuperf.grading.frontend import inline_calls

    # round 23 (h24-h26): a store made in a @triton.jit helper of the reader's is the kernel's store
    kernel = kernel_function(inline_calls(ttir))
    ops = kernel.ops if kernel is not None else ()
    seeds = [op.results[0] for op in ops if op.name in ("tt.dot", "tt.dot_scaled") and op.results]
    return sum(not _reaches_a_write(ops, seed) for seed in seeds)


#: Element-wise operations a broadcast tile keeps its shape through (for :func:`broadcast_tile_products`), beside
#: every ``math.`` operation (round 30: ``exp``, ``log``, ``abs``, ``fma``) and those of :data:`_ELEMENTWISE_TT`.
_ELEMENTWISE_PASS = frozenset(("arith.select", "arith.addf", "arith.subf", "arith.mulf", "arith.divf", "arith.negf",
                               "arith.extf", "arith.truncf", "tt.fp_to_fp", "arith.maximumf", "arith.minimumf",
                               "arith.maxnumf", "arith.minnumf", "arith.sitofp", "arith.uitofp", "tt.bitcast",
                               "arith.remf", "arith.bitcast",
                               # round 32: integers made from loaded floats (bits, a mantissa, an exponent)
                               "arith.extsi", "arith.extui", "arith.trunci", "arith.shli", "arith.shrsi",
                               "arith.shrui", "arith.andi", "arith.ori", "arith.xori", "arith.addi", "arith.subi",
                               "arith.muli", "arith.fptosi", "arith.fptoui",
                               # round 33 (13): tl.umulhi, the high half of an integer product
                               "tt.mulhiui"))

#: Triton's own element-wise operations (round 30: ``tl.clamp``, ``tl.math.div_rn``, ``tl.math.sqrt_rn``, an
#: extern function of libdevice).
_ELEMENTWISE_TT = frozenset(("tt.clampf", "tt.precise_divf", "tt.precise_sqrt", "tt.extern_elementwise"))

#: Element-wise operations that make a product or a quotient of their operands.
_PRODUCT_OPS = frozenset(("arith.mulf", "math.fma", "arith.divf", "tt.precise_divf", "arith.muli", "tt.mulhiui"))


#: Operations of two or more operands that combine no tiles element by element: loads and writes (addresses,
#: masks), a tile product, a comparison (a mask); and a loop's or a branch's own lines (``scf.``, ``^bb``).
_NOT_COMBINING = frozenset(_WRITES + ("tt.load", "tt.descriptor_load", "tt.dot", "tt.dot_scaled", "tt.addptr",
                                      "arith.cmpf", "arith.cmpi", "tt.return"))


#: The tags of a whole tile made of its sources, not a broadcast: "mixed" (broadcasts of different shapes
#: combined: an outer sum), "flat" (a broadcast reshaped so that a broadcast dimension merges with a real one).
_WHOLE = ("mixed", "flat")


def _elementwise(name: str) -> bool:
    return name in _ELEMENTWISE_PASS or name in _ELEMENTWISE_TT or name.startswith("math.")


def broadcast_tile_products(ttir: str, min_dims: int = 3, zero_arguments: frozenset = frozenset(),
                            distinct_tensors: bool = False) -> int:
    """Round 24 (23, 33): products of two tiles made with a broadcast multiply (``q[:, None, :] * k[None, :, :]``,
    then ``tl.sum``): an ``arith.mulf`` of at least three dimensions whose two operands were each broadcast from a
    tile with a 1 in a different place. Such a product is a matrix product done element by element, off the
    tensor cores, with a BLOCK_M x BLOCK_N x d tile in registers (the kernel's own helpers are read as part of
    it). Returns how many. ``min_dims=2`` (round 25's 20b): a column times a row too (``a[:, None] *
    b[None, :]``, a rank-1 update added into the accumulator, one k at a time), the same product off the tensor
    cores. A 2-D product counts only where both operands were computed from loaded values (a float mask,
    ``row_ok[:, None] * key_ok[None, :]``, is no product of tiles: round 26's h11, h16), and ``tl.fma`` of two
    such broadcasts counts as their product (round 26's 02). Round 29: a quotient by a broadcast reciprocal
    (``a[:, :, None] / (1 / b[None])``) counts as a product, and so does any product or quotient of two tiles of
    three or more dimensions computed from loaded values, broadcast or not (3-D tiles loaded as such). Round 30: any
    element-wise operation carries a broadcast; any float operation of two tiles broadcast against each other
    from loads counts, as does a reshape to three dimensions of a product of two loaded tiles. Round 31: a tile
    loaded through addresses that do not change along a dimension (a stride of 0, written or given as
    ``zero_arguments``, the names of the launch's integer arguments that are 0) is a broadcast, and a loop's
    carried values come from what it yields. Round 33: a reshape that merges a broadcast dimension with a real
    one makes a whole tile of its source (a flat outer product, ``(BM * BN, BK)``), and with
    ``distinct_tensors`` (L4, L5: no honest element-wise product there multiplies values loaded from two
    different arguments; L6's ``dO * O`` does) a product of two tiles loaded from different arguments (through
    pointers gathered to repeat rows, say) counts."""
    import re

    from gpuperf.grading.frontend import inline_calls

    kernel = kernel_function(inline_calls(ttir))
    if kernel is None:
        return 0
    shape = re.compile(r"tensor<((?:\d+x){%d,}\d+)x" % (max(min_dims, 2) - 1))
    three = re.compile(r"tensor<((?:\d+x){2,}\d+)x")
    defs = {r: op for op in kernel.ops for r in op.results}

    # round 31 (06): a loop's carried value comes from its initial value and from what the loop yields (a column
    # loaded before the loop and the next one loaded inside it); a loop's results from what it yields; an if's
    # results from what its branches yield; a while loop's from what its condition forwards (review 31)
    links: dict = {}
    regions: list = []
    forwarded: dict = {}  # a while loop: the values its condition forwards
    for op in kernel.ops:
        top = regions[-1] if regions else None
        if op.name == "scf.yield" and top is not None and top.name in ("scf.for", "scf.while", "scf.if"):
            for i, v in enumerate(op.operands):
                targets = [top.carried[i][0] if i < len(top.carried) else None]
                if top.name != "scf.while":
                    targets.append(top.results[i] if i < len(top.results) else None)
                for new_value in targets:
                    if new_value is not None:
                        links.setdefault(new_value, []).append(v)
        elif op.name.startswith("scf.condition") and top is not None and top.name == "scf.while":
            forwarded[id(top)] = op.operands[1:]
            for i, v in enumerate(op.operands[1:]):
                if i < len(top.results):
                    links.setdefault(top.results[i], []).append(v)
        elif op.name.startswith("^bb") and top is not None and id(top) in forwarded:
            for i, v in enumerate(op.operands):
                if i < len(forwarded[id(top)]):
                    links.setdefault(v, []).append(forwarded[id(top)][i])
        if op.closes_region and regions:
            regions.pop()
        elif op.opens_region:
            regions.append(op)
            for new_value, init in op.carried:
                links.setdefault(new_value, []).append(init)

    def computed_from(names: tuple):
        """The values computed from an operation named in ``names``, through any operation and a region's
        carried values and yields: found round after round until none is added (review 31: a value in a
        loop's cycle is not decided by which use asks first)."""
        hit: set = set()
        while True:
            before = len(hit)
            for op in kernel.ops:
                if (op.opens_region and not op.combines) or not op.results:  # (a reduction: from its operands)
                    continue
                if op.name in names or any(v in hit for v in op.operands):
                    hit.update(op.results)
            for value, sources in links.items():
                if value not in hit and any(v in hit for v in sources):
                    hit.add(value)
            if len(hit) == before:
                return hit.__contains__

    # (round 33: an atomic returns what it read, tl.atomic_add(p, 0.0) a load)
    from_load = computed_from(("tt.load", "tt.descriptor_load", "tt.atomic_rmw", "tt.atomic_cas"))
    from_dot = computed_from(("tt.dot", "tt.dot_scaled"))
    # review 33: an integer counts as loaded data only when made from a float's bits (a mantissa, an exponent);
    # indices made from a loaded tile counter or an order table are addresses, not data
    from_bits = computed_from(("tt.bitcast", "arith.bitcast", "arith.fptosi", "arith.fptoui"))
    integer_type = re.compile(r"x[iu]\d+>\s*$")

    def loaded_data(value: str) -> bool:
        op = defs.get(value)
        integer = op is not None and integer_type.search(op.text.rsplit(" : ", 1)[-1]) is not None
        return from_load(value) and (from_bits(value) or not integer)

    def loaded_from() -> dict:
        """Round 33 (r34's 05): the kernel arguments whose memory each value was loaded from, through any
        operation and a region's carried values and yields (a load: the arguments its pointers were computed
        from)."""
        args = frozenset(re.findall(r"(%[\w.$-]+): !tt\.ptr", kernel.header))
        where: dict = {a: frozenset({a}) for a in args}
        while True:
            before = sum(len(v) for v in where.values())
            for op in kernel.ops:
                if (op.opens_region and not op.combines) or not op.results:
                    continue
                if op.name in ("tt.load", "tt.atomic_rmw", "tt.atomic_cas") and op.operands:
                    pointer = op.operands[0] if op.name == "tt.load" else \
                        next((v for v in op.operands if v in where), op.operands[0])
                    found = frozenset(a for a in where.get(pointer, ()) if a in args)
                    tag = frozenset("load " + a for a in found)
                else:
                    tag = frozenset().union(*(where.get(v, frozenset()) for v in op.operands))
                for r in op.results:
                    if not tag <= where.get(r, frozenset()):
                        where[r] = where.get(r, frozenset()) | tag
            for value, sources in links.items():
                tag = frozenset().union(*(where.get(v, frozenset()) for v in sources))
                if not tag <= where.get(value, frozenset()):
                    where[value] = where.get(value, frozenset()) | tag
            if sum(len(v) for v in where.values()) == before:
                return {v: frozenset(t for t in tags if t.startswith("load ")) for v, tags in where.items()}

    loads_of = loaded_from() if distinct_tensors else {}

    def rank(op: Op) -> int:
        m = re.findall(r"tensor<((?:\d+x)*\d+)x", op.text.rsplit(" : ", 1)[-1])
        return len(m[-1].split("x")) if m else 0

    def zero(value: str, depth: int = 0) -> bool:
        """A constant 0, or an argument given as 0 at this launch (a stride of 0), through casts and splats."""
        if value.lstrip("%") in zero_arguments:
            return True
        op = defs.get(value)
        if op is None or depth > 16:
            return False
        if op.name == "arith.constant":
            return re.match(r"arith\.constant (dense<)?0[ >:]", op.text) is not None
        if op.name in ("arith.extsi", "arith.extui", "arith.trunci", "arith.index_cast", "tt.splat", "tt.broadcast",
                       "tt.expand_dims"):
            return bool(op.operands) and zero(op.operands[0], depth + 1)
        if op.name in ("arith.muli", "arith.andi"):
            return any(zero(v, depth + 1) for v in op.operands)
        if op.name in ("arith.subi", "arith.xori") and len(op.operands) == 2:  # x - x (review 31)
            return op.operands[0] == op.operands[1] or all(zero(v, depth + 1) for v in op.operands)
        return False

    integer_ops = ("tt.addptr", "arith.addi", "arith.subi", "arith.muli", "arith.extsi", "arith.extui", "arith.trunci",
                   "arith.andi", "arith.ori", "arith.xori", "arith.divsi", "arith.divui", "arith.remsi", "arith.remui",
                   "arith.shli", "arith.shrsi", "arith.shrui", "arith.maxsi", "arith.minsi", "arith.select",
                   "arith.index_cast", "tt.int_to_ptr", "tt.ptr_to_int")
    steady: dict = {}

    def constant_dims(value: str, depth: int = 0) -> frozenset:
        """The dimensions along which an integer or pointer tile certainly does not change (round 31: a tile loaded
        through addresses that do not change along a dimension, ``a_ptr + rows[:, None] * s + cols[None, :] * 0``,
        is a broadcast made in the addresses)."""
        if value in steady:
            return steady[value]
        steady[value] = frozenset()
        op = defs.get(value)
        found: frozenset = frozenset()
        if op is not None and depth < 48:
            n = rank(op)
            if zero(value):
                found = frozenset(range(n))
            elif op.name in ("tt.splat", "arith.constant"):  # (a product by 0: zero() above)
                found = frozenset(range(n))
            elif op.name == "tt.broadcast":
                m = re.search(r"tensor<((?:\d+x)*\d+)x", op.text.split("->")[0])
                ones = {i for i, d in enumerate(m.group(1).split("x")) if d == "1"} if m else set()
                found = frozenset(ones) | constant_dims(op.operands[0], depth + 1)
            elif op.name == "tt.expand_dims":
                axis = re.search(r"axis = (\d+)", op.text)
                if axis:
                    a = int(axis.group(1))
                    inner = constant_dims(op.operands[0], depth + 1)
                    found = frozenset({a} | {i + (i >= a) for i in inner})
            elif op.name in integer_ops and op.operands:
                found = frozenset(range(n))
                for v in op.operands:
                    found &= constant_dims(v, depth + 1)
        steady[value] = found
        return found

    def root(value: str, depth: int = 0) -> str:
        """What a value is, element by element, before operations with constants (``x + 0.0``, a cast): the
        address of a load (two loads of one address are one value), or the value (review 31: a tile joined
        with itself plus 0)."""
        op = defs.get(value)
        if op is None or depth > 32:
            return value
        if op.name == "tt.load" and op.operands:
            return "load " + op.operands[0]
        if _elementwise(op.name) and op.name != "arith.select":
            tiles = [v for v in op.operands if not constant_scalar(v)]
            if len(tiles) == 1:
                return root(tiles[0], depth + 1)
        return value

    def constant_scalar(value: str) -> bool:
        op = defs.get(value)
        return op is not None and op.name in ("arith.constant", "tt.splat")

    ones: dict = {}
    for op in kernel.ops:
        if op.name in ("tt.load", "tt.atomic_rmw", "tt.atomic_cas") and op.results and op.operands and \
                shape.search(op.text.rsplit(" : ", 1)[-1]):
            m = shape.search(op.text.rsplit(" : ", 1)[-1])
            dims = [int(n) for n in m.group(1).split("x")]
            steady_dims = frozenset(i for i in constant_dims(op.operands[0]) if i < len(dims) and dims[i] > 1)
            if steady_dims:  # the same element on every lane along those dimensions: a broadcast of a load
                ones[op.results[0]] = (steady_dims, op.results[:1])
        if op.name == "tt.broadcast" and op.results:
            m = shape.search(op.text.split("->")[0])
            if m:
                dims = [int(n) for n in m.group(1).split("x")]
                ones[op.results[0]] = (frozenset(i for i, n in enumerate(dims) if n == 1), op.operands[:1])
        elif op.name in ("tt.join", "tt.trans", "tt.reshape") and op.results and op.operands:
            # round 31: a tile joined with itself is a broadcast along the new dimension; a broadcast keeps its
            # dimensions of 1 through a transpose, and through a reshape that merges or splits only them
            src = op.operands[0]
            known = ones.get(src)
            types = re.findall(r"tensor<((?:\d+x)*\d+)x", op.text)
            if op.name == "tt.join" and len(op.operands) == 2 and root(op.operands[0]) == root(op.operands[1]) \
                    and types:
                last = len(types[-1].split("x")) - 1
                ones[op.results[0]] = ((known[0] if known and known[0] not in _WHOLE else frozenset()) | {last},
                                       known[1] if known else (src,))
            elif known and known[0] not in _WHOLE and op.name == "tt.trans":
                order = re.search(r"array<i32: ([\d, ]+)>", op.text)
                if order:
                    perm = [int(n) for n in order.group(1).split(",")]
                    ones[op.results[0]] = (frozenset(i for i, o in enumerate(perm) if o in known[0]), known[1])
            elif known and known[0] not in _WHOLE and op.name == "tt.reshape" and len(types) >= 2:
                before = [int(n) for n in types[0].split("x")]
                after = [int(n) for n in types[-1].split("x")]
                kept: set = set()
                merged = False
                i = j = 0
                while i < len(before) and j < len(after):  # groups of dimensions with the same product
                    gi, gj, pi, pj = [i], [j], before[i], after[j]
                    while pi != pj:
                        if pi < pj and gi[-1] + 1 < len(before):
                            gi.append(gi[-1] + 1)
                            pi *= before[gi[-1]]
                        elif pj < pi and gj[-1] + 1 < len(after):
                            gj.append(gj[-1] + 1)
                            pj *= after[gj[-1]]
                        else:
                            break
                    if all(d in known[0] or before[d] == 1 for d in gi):
                        kept.update(d for d in gj if after[d] > 1)
                    elif any(d in known[0] and before[d] > 1 for d in gi):
                        merged = True  # round 33 (r34's 01-04): a broadcast dimension merged with a real one
                    i, j = gi[-1] + 1, gj[-1] + 1
                if merged:
                    ones[op.results[0]] = ("flat", known[1])
                elif kept:
                    ones[op.results[0]] = (frozenset(kept), known[1])
    memo: dict = {}

    def constant(value: str) -> bool:  # a constant or a scalar splat: carries no tile
        op = defs.get(value)
        return op is not None and op.name in ("arith.constant", "tt.splat")

    def broadcast_of(value: str, depth: int = 0):
        """(the dimensions of 1, the sources) of a broadcast tile, seen through element-wise operations whose
        other operands carry no tile (round 27's 20, 21, 29, 36: ``tl.where(ok, a[:, :, None], 0.0)``, a cast,
        ``+ 0.0``; a select's condition is no data)."""
        if value in ones:
            return ones[value]
        if value in memo or depth > 32:
            return memo.get(value)
        memo[value] = None
        op = defs.get(value)
        if op is None or not _elementwise(op.name):
            return None
        data = op.operands[1:] if op.name == "arith.select" else op.operands
        found = [broadcast_of(v, depth + 1) for v in data]
        tiles = [f for f in found if f]
        if tiles and all(f[0] == tiles[0][0] for f in tiles) and \
                all(f or constant(v) for v, f in zip(data, found)):
            memo[value] = (tiles[0][0], tuple(s for f in tiles for s in f[1]))
        elif len({f[0] for f in tiles}) > 1 and all(f or constant(v) for v, f in zip(data, found)):
            # round 29's review: broadcasts of different shapes combined (an outer sum, col[:, None] + row[None, :])
            # make a whole tile of their sources; squared, (s * s - d * d) / 4 is their product
            memo[value] = ("mixed", tuple(s for f in tiles for s in f[1]))
        return memo[value]

    # an honest kernel with tiles of three dimensions batches its tl.dot (several heads a program): there the
    # lane-by-lane rule below does not apply (round 29's review)
    # (round 30: a batch of one entry, a[None] @ b[None], batches nothing)
    batched = False
    for op in kernel.ops:
        m = three.search(op.text.rsplit(" : ", 1)[-1]) if op.name == "tt.dot" and " : " in op.text else None
        batched = batched or bool(m and int(m.group(1).split("x")[0]) > 1)
    float_type = re.compile(r"x(?:f16|bf16|f32|f64|f8\w*)>\s*$")

    def product_of_loads(value: str, depth: int = 0) -> bool:
        """Whether ``value`` is, through element-wise operations, a product (or any float combination) of two
        tiles computed from loads and not from a tl.dot (round 30's 06)."""
        op = defs.get(value)
        if op is None or depth > 32 or not _elementwise(op.name):
            return False
        data = op.operands[1:] if op.name == "arith.select" else op.operands
        tiles = [v for v in data if not constant(v)]
        if len(tiles) >= 2 and all(from_load(v) and not from_dot(v) for v in tiles):
            return True
        return any(product_of_loads(v, depth + 1) for v in tiles)

    count = 0
    for op in kernel.ops:
        result_type = op.text.rsplit(" : ", 1)[-1]
        if op.name == "tt.reshape" and three.search(result_type) and op.operands and \
                product_of_loads(op.operands[0]):
            # round 30 (06): two 2-D tiles gathered so that their lane-by-lane product holds every a[i, k] *
            # b[k, n], reshaped to three dimensions and summed: the same products off the tensor cores
            count += 1
            continue
        if not _elementwise(op.name) and len(op.operands) >= 2 and op.name not in _NOT_COMBINING and \
                not op.name.startswith(("scf.", "^bb")):
            # round 33 (r32's 04, r33's 01-02): tiles broadcast against each other from loaded values handed
            # together to a reduction, whose own function may multiply them (tl.reduce((a[:, :, None], b[None]),
            # 1, f)), joined into one tile (tl.join, tl.cat, tl.interleave) that a scan multiplies (tl.cumprod),
            # or given to any function of Triton's: the products are made where no operation here is read
            found = [broadcast_of(v) for v in op.operands]
            tiles = [f for f in found if f and f[0] not in _WHOLE]
            flats = [f for f in found if f and f[0] == "flat"]
            if (len({f[0] for f in tiles}) > 1 or len(flats) > 1) and \
                    all(loaded_data(v) for f in tiles + flats for v in f[1]):
                count += 1
            continue
        if not _elementwise(op.name) or len(op.operands) < 2 or not shape.search(result_type):
            continue
        data = op.operands[1:] if op.name == "arith.select" else op.operands
        found = [broadcast_of(v) for v in data]
        if op.name in _PRODUCT_OPS:
            a, b = found[:2]
            wide = three.search(result_type)
            mixed = [f for f in (a, b) if f and f[0] == "mixed"]
            # a broadcast reshaped flat (one source) times a tile loaded too, not a product's result (review 33:
            # two heads side by side, acc * alpha reshaped flat, is no product of loads)
            flat = [(f, other) for f, other in ((a, data[1] if len(data) > 1 else None), (b, data[0]))
                    if f and f[0] == "flat"]
            if mixed and all(loaded_data(v) for f in mixed for v in f[1]):
                count += 1
            elif flat and all(loaded_data(v) for f, _ in flat for v in f[1]) and \
                    any(other is not None and not constant(other) and loaded_data(other) and not from_dot(other)
                        for _, other in flat):
                count += 1
            elif a and b and a[0] and b[0] and a[0] not in _WHOLE and b[0] not in _WHOLE and a[0] != b[0]:
                # (an integer product counts only of loaded values: index arithmetic multiplies broadcasts too)
                if (wide and float_type.search(result_type)) or all(loaded_data(v) for v in a[1] + b[1]):
                    count += 1
            elif distinct_tensors and a is None and b is None and len(data) >= 2 and \
                    not any(constant(v) or from_dot(v) or not loaded_data(v) for v in data[:2]) and \
                    all(loads_of.get(v) for v in data[:2]) and not loads_of[data[0]] & loads_of[data[1]]:
                # round 33 (r34's 05): whole tiles loaded from two different arguments multiplied lane by lane
                # (their rows gathered so that each lane pairs a[i, k] with b[k, j]): no honest kernel of L4 or
                # L5 multiplies two such tiles outside a tl.dot (a split-KV merge scales partial outputs by a
                # broadcast row statistic: review 33)
                count += 1
            elif wide and not batched and all(from_load(v) for v in op.operands[:2]):
                # round 29 (32): tiles of three dimensions loaded as such, each lane its own element, then
                # multiplied: no broadcast to see, the same products off the tensor cores (no lab's kernel has
                # a tile of three dimensions)
                count += 1
        elif not result_type.rstrip().endswith("xi1>"):  # (a mask, row_ok[:, None] & flag[None, :], is none)
            # round 30 (01-05, 07, 10, 12): any other float operation of two tiles broadcast against each other
            # from loaded values (an outer sum of logarithms, exponentiated, is a product with no multiply);
            # round 33 (14): an integer one too (logarithms in fixed point, added as integers)
            tiles = [f for f in found if f and f[0] not in _WHOLE]
            flats = [f for f in found if f and f[0] == "flat"]
            if (len({f[0] for f in tiles}) > 1 or len(flats) > 1) and \
                    all(loaded_data(v) for f in tiles + flats for v in f[1]):
                count += 1
    return count

