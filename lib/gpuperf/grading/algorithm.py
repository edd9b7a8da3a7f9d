"""What the kernels of one call did, program by program, under Triton's interpreter: the algorithm a lab
teaches, counted, so that a grader can check it on every machine.

:func:`traced` patches the interpreter (``GridExecutor`` and ``InterpreterBuilder``) for the duration of one
call of the reader's function and returns a :class:`Trace`: for every launch, the elements each tensor
argument had loaded and stored (active lanes only, counted as the bytes they read or write in elements of
the argument: a lane of a pointer to int64 over fp32 is two elements), the elements stored by 2-D blocks, the
shapes of the ``tl.dot`` products, the widest block loaded per argument, and the programs that ran. On a CPU
every case runs this way; on a GPU the graders add small cases whose kernels run through the interpreter on CPU tensors
(``triton.runtime.interpreter.InterpretedFunction(kernel.fn)``, the rest of the process compiled), so the
same counts are graded there too.

**Races.** The interpreter runs a grid's programs one after another, so two programs that store to the same
element without an atomic (a split-K matmul that adds its partial sums with a load and a store, a dQ
accumulated by every key block) give the right answer there and a wrong one on a GPU, where they run at the
same time. :class:`Trace` records, per launch, which program stored and which loaded each address, and
:meth:`Trace.race` names the first element that two programs stored, or that one program read while another
program of the same launch wrote it. Accumulating atomics (``tl.atomic_add``, max, min, and, or, xor: their
order does not change the result) are not stores, but a load of an address that another program of the
same launch updates with one is a race (the "last program" that reads the sum may run first on a GPU), and so
is an atomic's own returned value (what was there before it) where it reaches what the program writes (the
value of a store, or of a later atomic, through any arithmetic: ``before + acc`` stored as the finished tile);
a returned value that only decides control flow (a counter tested in an ``if``, run in Python here) or an
address is not counted. An atomic exchange or compare-and-swap that two programs make to one address is a race
(a load, then an exchange of the loaded value plus a contribution, loses updates on a GPU), and so are an
exchange meeting another program's atomic add (an add landing first is wiped out) and a plain store meeting
another program's atomic.

**Tickets.** A counter that every atomic of the launch adds one constant to (``item = tl.atomic_add(counter,
1)``: a persistent kernel's dynamic scheduler) returns the same values whatever order the programs run in; only
which program draws which changes. Its returned values are tickets, not partial sums (:func:`_tickets`): a write
may depend on a ticket (its value, address or mask, through loads too: q loaded at the ticket's rows), but not on
the ticket and the program id, nor on two tickets, and a program may not draw again without using the ticket it
drew (:func:`_ticket_race`); every value carries what it depends on that differs between programs
(``_gpuperf_who``: the program id and the atomics whose returned values reached it). With a counter per group of
programs (``tl.atomic_add(counter + pid // SPLITS, 1)``) a write may also depend on the program id through values
that all the programs drawing from that element share: each value computed from the program id and constants alone
is a node, one function of the program id whose value the trace notes in every program (:func:`_same_in`), and a
value computed from others carries the nodes the program id came through (``_gpuperf_pvia``). After a draw, an
``if``, ``while`` or loop bound decided by the program id must be such a shared value too, and a program may not
read back what it stored at an address chosen by other draws than the read's (:func:`_read_back_race`). The
program whose draw returned the counter's final value may reset it with an exchange after testing that value in
an ``if`` (:func:`_resets`). Under the interpreter the first program draws every ticket, so each draw's work is
recorded as a program of its own, numbered from the grid's size up (:func:`_split_at_draws`, which gives each
stretch between two draws to the draw its writes depend on: a scheduler may fetch the next ticket first): on a GPU
the draws spread over the programs.

**32-bit offsets.** A value computed from ``tl.program_id`` carries a taint, and so does a size or stride the
kernel was given at run time (an integer argument other than 1, which Triton compiles as a constant) or as a
``tl.constexpr`` that is not a block's shape (:func:`gpuperf.grading.frontend.stride_constexprs`); a
product in fewer than 64 bits of one by the other (``row * stride``, ``head * N * D``) wraps past 2^31
elements, however the result is widened afterwards. :meth:`Trace.wrapping_offsets` counts the loads and
stores whose addresses carry it.

**What a product multiplies.** Every value a kernel computes carries the tensors it was computed from (the
arguments whose loads reach it, through casts, transposes, arithmetic, ``tl.where``, reductions and earlier
dots), so :meth:`Trace.products` tells the score tile Q K^T, a product of (q) and (k), from P V, a product of
(q, k) and (v): a grader can ask for each product of an algorithm as a dot, not only for enough multiply-adds.
A loaded value carries, besides the tensor it read, the sources of its addresses and mask (a gather through an
index computed from K) and those of what the same launch stored at those addresses (a value stored to scratch
and loaded back keeps what it was computed from; an atomic's returned value too); what earlier launches stored
there is :func:`_link`'s. The loads a value came from (:attr:`Launch.dot_loads`) travel the same way within one
program: a block it stored to its own scratch and loaded back is still the block it loaded.
Control flow decided by a loaded value (an ``if``, a loop's trip count) passes nothing on.

**Which tensor a load reads.** Each lane of a load, store or atomic is booked to the argument its address falls
in (the first active lane's argument first), so a load that points one lane at a row's statistics and the rest
at x counts as a load of x. Where two arguments' memory overlaps, the grader's tensor itself comes first, then
the argument of the pointer's own element type, then the launch's order; and an argument that is a view of one
of the grader's tensors in another dtype (``k.view(torch.int16)``) is recorded as that tensor (its first byte,
extent and element size): an alias passed first, read or not, takes no lanes from the tensor it views.

This module adds its own patches on top of the watch's (:mod:`gpuperf.grading.watch`) and removes them after
the call; it never changes what a kernel computes.
"""

from __future__ import annotations

import contextlib
import functools
import math
from dataclasses import dataclass, field
from typing import Iterator

from gpuperf.grading.watch import _raw_storage_ptr  # the storage address read through torch's classes

_TRACE: "Trace | None" = None

#: Round 28: the tile products' call sites of the reader's ``tl.dot`` (see :func:`_dot_site`) seen while a case ran
#: under the interpreter (``seen``: site -> (the file and line that name it, its place in the kernel)), and the one
#: site whose products the grader perturbs (``site``: each product made there changed by noise of its own size;
#: "every": all of them; "zero": all of them made 0; "small": all of them changed by 2^-22 of themselves; "late":
#: every call of each site but its first in each program; "first": only those first calls; "double": every product
#: doubled, where L4's C must come out doubled) to ask whether the
#: output depends on it (:func:`gpuperf.grading._products_matter`); ``calls``: how often each site ran in each
#: program of each launch, in the rerun.
_PERTURB: dict = {"site": None, "seen": {}, "calls": {}}


def _dot_site():
    """The reader's ``tl.dot`` call that made the product being computed, as a site: the chain of every frame of
    the reader's code on the stack, each by its code and the instruction it was at (round 29: two dots on one
    line, or one helper called from two places, are two sites; a loop's iterations are one), and the innermost
    one's (file, line) to name it, with the part of the chain inside the kernel, the frames of ``@triton.jit``
    functions (a launch from another line of the reader's, a tuner's say, is the same place in the kernel). The
    reader's code is every frame that is not torch's, Triton's, NumPy's, the standard library's or the grader's
    (``watch._is_trusted_file``, not a folder's name: round 28's review). None when no frame is the reader's."""
    import sys

    from triton.runtime.jit import KernelInterface

    from gpuperf.grading.watch import _is_trusted_file

    skip = _not_readers_dirs()
    frame = sys._getframe(2)
    chain: list = []
    inner: list = []  # the frames of @triton.jit functions: the place in the kernel
    shown = None
    while frame is not None:
        code = frame.f_code
        name = code.co_filename
        if not (name.startswith(skip) or _is_trusted_file(name)):
            entry = (name, code.co_name, code.co_firstlineno, frame.f_lasti)
            chain.append(entry)
            if isinstance(frame.f_globals.get(code.co_name), KernelInterface):
                inner.append(entry)
            if shown is None:
                shown = (name, frame.f_lineno)
        frame = frame.f_back
    return (tuple(chain), (shown, tuple(inner) or tuple(chain))) if chain else None


@functools.lru_cache(maxsize=1)
def _not_readers_dirs() -> tuple:
    """The grader's own folder and NumPy's (the interpreter's arithmetic): no frame there is the reader's."""
    import os

    import numpy

    return tuple(os.path.dirname(os.path.abspath(f)) + os.sep for f in (__file__, numpy.__file__))


@dataclass
class Launch:
    """One interpreted launch: ``args`` are ``(name, start, end, element_size, numel)`` byte spans."""

    kernel: str
    args: list = field(default_factory=list)
    programs: int = 0
    #: argument name: active elements loaded, counted as the bytes the lanes read in elements of the argument
    #: (a lane of a pointer to int64 over fp32 reads two elements; see :func:`_worth`)
    loaded: dict = field(default_factory=dict)
    #: argument name: the element type of a pointer that loaded it with lanes of another size than its own
    #: (``int64`` over fp32 rows): the first such load's
    recast: dict = field(default_factory=dict)
    stored: dict = field(default_factory=dict)  # argument name: active elements stored (non-atomic), as loaded
    #: argument name: {how many of the launch's arguments the stored value was computed from (its sources, see
    #: :meth:`Trace.products`): elements stored, counted as in ``stored``}: a score tile S or P comes from q and
    #: k, a split's unnormalised output P V from q, k and v (the message of the graders' scratch check)
    stored_from: dict = field(default_factory=dict)
    widest_load: dict = field(default_factory=dict)  # argument name: largest block of one load (its elements)
    load_shapes: dict = field(default_factory=dict)  # argument name: {block shape: count}
    #: every load (and atomic) in the order the programs made them, masked off or not: (argument name, program,
    #: lowest and highest address of the block's lanes, the tl.dot calls the program had made before it, lowest
    #: and highest address of its active lanes or None): which blocks a program visited, and which block of
    #: the other tensor it worked on then (the loads with no tl.dot between them are one block: a block loaded
    #: in halves before its products is one visit)
    visits: list = field(default_factory=list)
    #: visit index (into ``visits``): where its active lanes, or all its lanes, are not one block of memory, the
    #: ``(lowest, highest)`` address of each run of consecutive elements, in address order, of its active lanes
    #: and of all its lanes (None for either that is one run, its span, or has no lane). A tile of 31 rows with
    #: one lane at row 0 is two runs, not rows 0-62
    visit_runs: dict = field(default_factory=dict)
    dots_run: dict = field(default_factory=dict)  # program: the tl.dot calls it made
    per_program: dict = field(default_factory=dict)  # argument name: {program: active elements loaded}
    spans: list = field(default_factory=list)  # (argument name, program, lowest, highest active address) per load
    #: span index: the runs of consecutive elements of its active lanes, (first, last) address each, where they
    #: are not one run (a tile whose rows past N wrap to the head's first rows, ``rows % N``)
    span_runs: dict = field(default_factory=dict)
    span_worth: list = field(default_factory=list)  # per :attr:`spans` entry: the elements the load counted
    stored_2d: int = 0  # active elements stored by blocks with at least two dimensions > 1
    blocks_2d: list = field(default_factory=list)  # the active addresses of each such store
    atomics: int = 0
    atomic_args: set = field(default_factory=set)  # argument names an atomic updated
    atomic_written: dict = field(default_factory=dict)  # argument name: distinct elements atomics updated
    _atomic_addresses: dict = field(default_factory=dict)  # argument name: [addresses of each atomic]
    store_shapes: dict = field(default_factory=dict)  # block shape of each store: count
    narrow_pid_offsets: int = 0  # loads and stores whose addresses come from an int32 product of a program id
    #: loads and stores whose addresses come from an int32 product of a program id (or an index computed from
    #: one) with a size or stride the kernel was given at run time: past 2^31 elements it wraps around
    wrapping_offsets: int = 0
    wrapping_kernel: str = ""
    #: of those, the ones outside one head: in attention a block's rows times a stride (a program id's value with
    #: tl.arange lanes in it) counts only where the address has no head offset computed in 64 bits
    wrapping_heads: int = 0
    wrapping_heads_kernel: str = ""
    dot_shapes: dict = field(default_factory=dict)  # (M, K, N): count
    #: program: {argument name: (bytes, shape, element size) of the largest tile loaded from it that reaches a
    #: tl.dot operand lane by lane (as loaded, moved, or through arithmetic, casts, ``tl.where``), counted as
    #: loaded}: the tiles a GPU stages in shared memory together (:meth:`Trace.dot_tile_bytes`)
    dot_tiles: dict = field(default_factory=dict)
    #: (program, number of ``spans`` recorded before it) per tl.dot: which loads a product came between
    dot_marks: list = field(default_factory=list)
    #: (M, K, N, sources of the left operand, sources of the right): count, where an operand's sources are the
    #: arguments (their first byte's address) whose loaded values it was computed from (see :meth:`Trace.products`)
    dot_sources: dict = field(default_factory=dict)
    #: the same keys: the products of two non-zero elements the dots made, sum over k of (non-zeros of the left
    #: operand's column k) x (non-zeros of the right operand's row k) (round 33: a dot of tiles mostly masked to 0
    #: by an index, the rest of the work done some other way, makes few; see :meth:`Trace.products`)
    dot_nonzero: dict = field(default_factory=dict)
    #: (program, the loads (indices into ``visits``) its two operands were computed from) per tl.dot, in the
    #: order of ``dot_marks``: which blocks of q and k reached one product (a load whose value reaches no
    #: operand, as ``acc += decoy * 0``, is in none)
    dot_loads: list = field(default_factory=list)
    #: (program, the loads of the first operand, the loads of the second) per tl.dot, in the same order: which
    #: rows of one tensor a product multiplied by rows of the other (a running max carried from an earlier block
    #: into ``p`` of ``p @ v`` brings that block's loads into ``p``'s operand, not into a product with a tile of k)
    dot_operand_loads: list = field(default_factory=list)
    #: (program, the loads of the operand) per tl.dot one of whose operands is all zeros (round 27's 32 and 46: a
    #: tile of zeros multiplied in place of a block past the diagonal that was never loaded)
    dot_zero_operands: list = field(default_factory=list)
    #: review 31: float products (``*``, ``/``, fma) of two tiles as loaded, each through addresses that do not
    #: change along a dimension the other's change along (a column times a row, broadcast in the addresses by a
    #: stride of 0 however it was computed): how many, under the interpreter
    address_outer: int = 0
    #: (argument name, program, number of ``visits`` recorded before it, lowest and highest active address) per
    #: store or atomic with active lanes, in order: which rows of an output a program wrote after which loads (an
    #: output added to with ``tl.atomic_add`` is written too, at the addresses no other program of the launch
    #: writes: an atomic of zeros into another program's rows marks nothing)
    store_marks: list = field(default_factory=list)
    _atomic_marks: list = field(default_factory=list)  # (place in store_marks, addresses) per atomic's mark
    _stores: list = field(default_factory=list)  # (addresses, program)
    _loads: list = field(default_factory=list)
    #: per entry of ``_stores`` and of ``_loads``: ``_gpuperf_who`` of its address and mask, less the program id
    #: (the draws that chose where it wrote or read: :func:`_read_back_race`)
    _store_where: list = field(default_factory=list)
    _load_where: list = field(default_factory=list)
    _exchanges: list = field(default_factory=list)  # (addresses, program): atomic exchanges and CAS
    #: (addresses, program): atomic and, or, xor, min, max (also in ``_adds``): bits set or cleared, or a bound,
    #: which together write a value as a store does (round 25's 16-18: ``atomic_and(0)`` then
    #: ``atomic_or(bits)``; round 26's 05: ``atomic_min(INT_MIN)`` then ``atomic_max(bits)``)
    _bitwise: list = field(default_factory=list)
    _adds: list = field(default_factory=list)  # (addresses, program): accumulating atomics (add, max, ...)
    #: (addresses, program): atomic adds of computed values (not constants): one program adding to one address
    #: twice keeps an accumulator in memory (round 27's 23; :attr:`added_again`)
    _value_adds: list = field(default_factory=list)
    #: the sorted addresses one program atomically added computed values to more than once in the launch
    added_again: object = None
    #: (addresses, program) per atomic (add, max, exchange, ...): the elements whose old values it returned; its
    #: index is the ``_gpuperf_ret`` tag the returned value and what is computed from it carry
    _returned: list = field(default_factory=list)
    #: the indices into ``_returned`` of the returned values that reached what a program wrote: the value of a
    #: store with active lanes, or the value an atomic adds or exchanges (its address, its mask and control flow
    #: do not count): reads of those elements, as a tl.load's (:func:`_find_race`)
    _used_returns: set = field(default_factory=set)
    #: indices into ``_returned`` of the atomic adds of one constant (the same value in every lane, computed from
    #: nothing loaded, returned or made from the program id): a counter's draw, ``tl.atomic_add(counter, 1)``.
    #: Each maps to its constant (dtype, value); :func:`_tickets` keeps those whose counter no other atomic adds to
    _constant_adds: dict = field(default_factory=dict)
    #: what the program-specific values a write's value, address or mask carry (``_gpuperf_who``: the program id
    #: as :data:`_PROGRAM_ID`, an atomic's returned value as its index): {that set: the first program that wrote}
    _who_writes: dict = field(default_factory=dict)
    _order: list = field(default_factory=lambda: [0])  # a counter of events (atomics, tested conditions)
    _atomic_order: list = field(default_factory=list)  # per ``_returned`` index: its place in that order
    #: (place in the order, program, ``_gpuperf_who`` of the tested value, truth) per ``if``/``while`` on a
    #: tensor that carries one: which draws a program's control flow depended on (the reset of a counter)
    _conditions: list = field(default_factory=list)
    #: per record of ``_exchanges``: (its ``_returned`` index, ``_gpuperf_who`` of its value, address and mask,
    #: whether its value is a constant)
    _exchange_info: list = field(default_factory=list)
    #: (``_returned`` index, program, {list attribute: its length then}) per constant add: where a counter's
    #: draw cut the program's records (:func:`_split_at_draws`)
    _draw_marks: list = field(default_factory=list)
    #: (program, ``_gpuperf_who`` of its value, address and mask) per store or atomic with active lanes, in order
    _write_log: list = field(default_factory=list)
    #: the values computed from the program id and constants alone (``pid // SPLITS``, a block's rows), each a
    #: node: {its operation and operands: the node's number}, per node the numbers of its operands that are nodes
    #: (none for the program id itself), and per node {program: its value there}. A node is one function of the
    #: program id, so the values a node takes in the programs tell whether it differs between them
    #: (:func:`_same_in`)
    _pid_nodes: dict = field(default_factory=dict)
    _pid_operands: list = field(default_factory=list)
    _pid_values: list = field(default_factory=list)
    #: {(``_gpuperf_who``, the nodes the program id reached it through): the first program} per write that
    #: depends on a draw and on the program id (a counter per group, ``cnt + pid // SPLITS``: :func:`_ticket_race`)
    _pid_writes: dict = field(default_factory=dict)
    #: (place in the order, program, the nodes the program id reached it through) per ``if``, ``while`` or loop
    #: bound (``range(lo, hi)``) decided by a value made from the program id
    _pid_conditions: list = field(default_factory=list)
    #: the counter draws of the launch whose work is recorded as a program of its own (:func:`_split_at_draws`),
    #: numbered from the grid's size up; 0 where the programs are as launched
    ticket_draws: int = 0
    race: str = ""
    #: the distinct (address, program) pairs the launch wrote (stores and atomics, active lanes), addresses
    #: sorted: which programs wrote what (:meth:`Trace.writers`)
    writes: tuple = ()
    #: round 23: the byte addresses one program stored (plain stores, active lanes) more than once in this launch
    #: (an output's store left inside a loop), sorted, and every address the launch stored (sorted, distinct):
    #: :meth:`Trace.stored_again` reads them for the outputs of the call
    stored_again: object = None
    stored_set: object = None
    #: :attr:`writes` less the lanes that left memory as it was (an atomic add of 0, or of a value too small to
    #: change the sum; a max below what is there; a store of what the program loaded from the same address): the
    #: writes that set a value. None where every lane could change something (then :attr:`writes`)
    value_writes: tuple = None
    _value_atomics: list = field(default_factory=list)  # (addresses, program): the atomic lanes that set a value
    _value_stores: list = field(default_factory=list)  # (addresses, program): the stored lanes that set a value
    _still_lanes: int = 0  # stored and atomic lanes that left memory as it was
    #: program: the programs of earlier launches of the call (``index << 32 | program``, index counting
    #: launches from 0) whose stores it loaded: what one kernel hands the next through memory
    sources: dict = field(default_factory=dict)
    #: (program, one of its ``sources``): the lineage of what it loaded from that program's stores, the
    #: ``(launch index, argument's first byte)`` of every load the stored values were computed from, through
    #: memory too (a value computed from what an earlier launch stored carries that store's lineage): which
    #: tensors the handed-over values depend on (see :meth:`Trace.through_launches`)
    read_lineage: dict = field(default_factory=dict)
    index: int = -1  # the launch's place in the call, counting from 0 (the index of its lineage)
    grid: tuple = (1, 1, 1)  # the programs on each axis
    _lineage_loads: list = field(default_factory=list)  # (addresses, program, argument's first byte, lane bytes)
    _lineage_writes: list = field(default_factory=list)  # (addresses, program, sources of the value, piece bytes)
    #: sources of the values this launch stored: [lowest, highest address, arrays of addresses not yet merged,
    #: the merged sorted addresses], so that a load of what the same launch stored carries what it was computed
    #: from (a row's lse rebuilt from K, stored to scratch and loaded back before it is handed on)
    _stored_sources: dict = field(default_factory=dict)
    #: program: [lowest, highest address, [(lowest, highest address, sorted addresses, loads)]], one entry per
    #: store or atomic of a value computed from loads (:attr:`visits` indices), latest last: a program's own load
    #: of what it stored there carries those loads (a block stored to scratch and loaded back in the same launch
    #: is still the block it loaded)
    _stored_loads: dict = field(default_factory=dict)
    #: the lanes this launch stored as an element-for-element copy of a loaded element (the loaded value itself,
    #: or computed from it lane by lane with nothing else loaded: a cast, ``x * 1.0``, ``tl.where(mask, x, 0)``):
    #: [(destination addresses, source addresses)], what :func:`gpuperf.grading.exercises._kernel_images` maps
    #: back to the grader's tensors (a copy kernel of the reader's own is a copy, as torch's are)
    copies: list = field(default_factory=list)
    copied: int = 0  # the lanes of those copies
    #: the stored lanes computed lane by lane from a loaded element with other operands computed from loads
    #: too (``k * f`` where ``f`` comes from a reduction of k or a loaded scalar; ``tl.exp(k + s)``), less those
    #: in :attr:`copies`: [(destination addresses, source addresses)]. Values derived from those elements, not
    #: copies of them: the causal skip checks count their loads as visits of the rows they were computed from,
    #: and the pass counts as loads of those rows (:func:`gpuperf.grading.exercises._derived_images`)
    derived: list = field(default_factory=list)
    #: every lane it stored (no atomics, no tl.dot) was such a copy: a kernel that moves data, whose loads are
    #: counted where its copies are read
    copy_only: bool = False
    #: the arguments that are one of the grader's tensors itself (its first byte, extent and element size), or a
    #: view of one in another dtype: where another argument holds the same address, the lane is booked to them
    _exact: set = field(default_factory=set)
    #: the arguments whose memory lies in one of the grader's tensors (a view, a slice), and the element size of
    #: the grader's first floating-point tensor of the call: the unit of the loads and stores of the reader's
    #: own memory (see :func:`_worth`)
    _in_grader: set = field(default_factory=set)
    _grader_unit: int = 0


@dataclass
class Trace:
    """Every interpreted launch of one call of the reader's function."""

    launches: list = field(default_factory=list)
    #: memory the reader's function filled with copies of the grader's tensors (``clone``, which
    #: ``.contiguous()`` runs; ``.to()``; ``copy_``), each mapped back to the tensor it copies
    #: (:class:`gpuperf.grading.exercises.Image`): its loads count as loads of that tensor
    images: list = field(default_factory=list)
    #: the grader's tensors of the call (inputs and buffers it handed over), which the images copy
    owners: list = field(default_factory=list)
    #: (sorted addresses, owner = launch index << 32 | program, lineage id): the last writer of the bytes from
    #: each address on (:attr:`_written_bytes` of them, at most 4; the records never overlap), and the lineage of what it
    #: wrote there (an index into ``_lineages``). A write over part of a record's bytes leaves the rest of them
    #: to the old writer (:func:`_trim`): a value keeps its lineage while any byte of it holds a kernel's write
    _written: tuple = ()
    #: the bytes each record of :attr:`_written` spans (an int64 array beside its addresses)
    _written_bytes: object = None
    _lineages: list = field(default_factory=list)  # the distinct lineages of values written (frozensets)
    _lineage_ids: dict = field(default_factory=dict)  # lineage: its index in _lineages
    #: what torch wrote while the reader's function ran, in order (:meth:`torch_event`): ``("new", storage
    #: address, bytes)``, ``("copy", source layout, target layout)``, ``("fill", layout)``, a layout being (storage
    #: address, element size, shape, strides, offset in elements)
    torch_events: list = field(default_factory=list)
    #: (launches run before it, source layout, target layout) of each torch copy made after a kernel wrote
    #: something, and (launches run before it, None, (address, bytes)) of new memory after one did: where the
    #: values an output holds were computed (:func:`gpuperf.grading.exercises._out_writes`)
    copies_at: list = field(default_factory=list)
    #: (first byte, end) of the reader's own buffers a kernel stored values into that were not values computed
    #: in fp32 (int32, fp16, or bits reinterpreted by a bitcast): see :func:`_packed`
    _packed: list = field(default_factory=list)
    #: the :class:`gpuperf.grading.exercises.Image` s of values the reader's kernels derived lane by lane from the
    #: grader's tensors (:attr:`Launch.derived`), copies included; None until the causal skip checks ask
    #: (:func:`gpuperf.grading.exercises._derived_images`)
    derived_images: list = None
    #: (first byte, end, element size, elements) of each of :attr:`owners`, as the last launch's arguments were
    #: bound (:func:`_in_owner` reads them while a kernel runs)
    _owner_spans: list = field(default_factory=list)

    def torch_event(self, event: tuple) -> None:
        """Record what torch just wrote (see :attr:`torch_events`); a copy's target bytes take the last writer
        and lineage of the bytes it copies (:meth:`_torch_copied`)."""
        self.torch_events.append(event)
        if event[0] == "copy" and self._written and all(event[1][2]) and all(event[2][2]):
            self.copies_at.append((len(self.launches), event[1], event[2]))
        elif event[0] == "new" and len(event) > 2 and event[2] and self._written:
            self.copies_at.append((len(self.launches), None, (int(event[1]), int(event[2]))))
        if event[0] == "copy":
            self._torch_copied(event[1], event[2])
        elif event[0] == "fill" and all(event[1][2]) and self._written:  # constants: no kernel's result is left
            self._forget(_layout_addresses(event[1]).reshape(-1), event[1][1])
        elif event[0] == "new" and len(event) > 2 and event[2]:  # new memory (reused storage): the same
            import numpy as np

            self._forget(np.array([event[1]], dtype=np.int64), int(event[2]))
            # nor is what a kernel packed into the old memory (:func:`_packed`) packed in the new
            low, high = int(event[1]), int(event[1]) + int(event[2])
            self._packed[:] = [(a, b) for a, b in self._packed if not (a < high and low < b)]

    def _forget(self, starts, size: int) -> None:
        """Drop the writers recorded (:attr:`_written`) in the ``size`` bytes from each of ``starts``: only for
        the bytes overwritten (a fill of the low byte of each fp32 leaves the other three bytes, and so the
        value, to the kernel that wrote it)."""
        import numpy as np

        if not self._written or not starts.size:
            return
        lows, highs = _byte_runs(np.asarray(starts).reshape(-1), size)
        _put(self, _trim(_records(self), lows, highs))

    def _torch_copied(self, source: tuple, target: tuple) -> None:
        """A torch copy (``clone``, which ``.contiguous()`` runs; ``.to()``; ``copy_``, into any view) wrote
        ``target`` from ``source``: each element of the target takes the last writer and the lineage of the
        element it copies, as if the program that stored that one had stored it there too (a row's max handed on
        through ``m.clone()`` still links the kernel that reads the clone to the one that found the max), and
        what earlier launches wrote there is gone."""
        import numpy as np

        if not self._written or not all(source[2]) or not all(target[2]):
            return
        w_addr, w_owner, w_lineage, w_width = _records(self)

        def written_in(layout, before=0):  # any write recorded in the layout's bytes (or ``before`` them)
            low, high = _layout_bytes(layout)
            return np.searchsorted(w_addr, np.uint64(max(low - before, 0))) < \
                np.searchsorted(w_addr, np.uint64(high))

        if not written_in(source, _PIECE) and not written_in(target):
            return
        t_addr = _layout_addresses(target)
        s_addr = _layout_addresses(source)
        try:
            s_addr = np.broadcast_to(s_addr, t_addr.shape)
        except ValueError:  # pragma: no cover - torch broadcast it otherwise: leave the writers as they are
            return
        t_addr, s_addr = t_addr.reshape(-1).astype(np.int64), s_addr.reshape(-1).astype(np.int64)
        es_s, es_t = source[1], target[1]
        # the writes recorded in each source element's bytes (a wide element's 4-byte pieces, :func:`_pieces`;
        # the 4-byte write a byte of an int8 view lies in)
        lane, rec = _overlapping(w_addr, w_width, s_addr, es_s)
        if es_s == es_t:  # a copy of bits: each piece lands at its place in the target element
            ra = w_addr[rec].astype(np.int64)
            low = np.maximum(ra, s_addr[lane])
            high = np.minimum(ra + w_width[rec], s_addr[lane] + es_s)
            n_addr, n_width = t_addr[lane] + (low - s_addr[lane]), high - low
        else:  # a conversion: the target element takes the writer of the first piece of the source's, whole
            lane, first = np.unique(lane, return_index=True)
            rec = rec[first]
            offsets = np.arange(0, es_t, _PIECE, dtype=np.int64)
            rec = np.repeat(rec, offsets.size)
            n_addr = (t_addr[lane][:, None] + offsets[None, :]).reshape(-1)
            n_width = np.tile(np.minimum(es_t - offsets, _PIECE), lane.size)
        # what earlier launches wrote into the target's elements is overwritten
        lows, highs = _byte_runs(t_addr, es_t)
        _put(self, _insert(_trim(_records(self), lows, highs), n_addr, w_owner[rec], w_lineage[rec], n_width))

    def torch_element_size(self, t) -> int | None:
        """The element size of the values torch last copied into the bytes of tensor ``t`` (a buffer of the
        reader's own that ``ws.view(k.dtype).copy_(k)`` filled holds k's elements), or None where torch's last
        write there was a fill or an allocation, or none was recorded. A copy of bits through views in another
        dtype (``k.view(torch.int16).clone()``) holds the elements of what it copies, a conversion (``.to()``)
        its own."""
        span = _span(t)
        if span is None or not self.torch_events:
            return None
        return self._held(_raw_storage_ptr(t), span[0], span[1], len(self.torch_events))

    def _held(self, storage: int, low: int, high: int, before: int, depth: int = 0) -> int | None:
        """:meth:`torch_element_size` of bytes ``[low, high)`` of ``storage``, as of event ``before``."""
        for at in range(before - 1, -1, -1):
            event = self.torch_events[at]
            if event[0] == "new":
                if event[1] == storage:
                    return None
                continue
            layout = event[-1]
            if layout[0] != storage or not all(layout[2]):
                continue
            start, end = _layout_bytes(layout)
            if not (start < high and low < end):
                continue
            if event[0] != "copy":
                return None
            source = event[1]
            if source[1] != layout[1] or depth > 8 or not all(source[2]):  # a conversion: its own elements
                return layout[1]
            # a copy of bits: the elements of what it copies (one of the grader's tensors, or an earlier copy)
            s_low, s_high = _layout_bytes(source)
            for owner in self.owners:
                o = _span(owner)
                if o is not None and _raw_storage_ptr(owner) == source[0] and o[0] < s_high and \
                        s_low < o[1]:
                    return o[2]
            return self._held(source[0], s_low, s_high, at, depth + 1) or layout[1]
        return None

    def through_launches(self, own: dict, follows=None) -> int:
        """The most that one program and every program of an earlier launch it read from (through memory,
        directly or through others) did, ``own`` giving each program's share (keys ``index << 32 |
        program``): a first kernel's per-row statistics read by a second count against the second.
        ``follows`` (a lineage, see :attr:`Launch.read_lineage`, to a boolean): follow only the links whose
        values depend on what it picks (a row's max rebuilt from K, not a row sum of dO * O that a kernel
        which also walks K stored beside its output); a link without a lineage is followed."""
        return self.heaviest(own, follows)[0]

    def heaviest(self, own: dict, follows=None) -> tuple:
        """:meth:`through_launches`, told: ``(the most, the program that did it, the programs of earlier
        launches counted with it)``, programs as ``index << 32 | program`` (``(0, None, set())`` for none)."""
        seen: dict = {}

        def ancestors(node):
            if node not in seen:
                seen[node] = set()
                index, program = node >> 32, node & 0xFFFFFFFF
                launch = self.launches[index]
                found = set()
                for source in launch.sources.get(program, ()):
                    lineage = launch.read_lineage.get((program, source))
                    if follows is not None and lineage is not None and not follows(lineage):
                        continue
                    found.add(source)
                    found |= ancestors(source)
                seen[node] = found
            return seen[node]

        nodes = set(own)
        for index, launch in enumerate(self.launches):
            nodes.update((index << 32) | program for program in launch.sources)
        best = (0, None, set())
        for node in sorted(nodes):
            found = ancestors(node)
            total = own.get(node, 0) + sum(own.get(a, 0) for a in found)
            if total > best[0]:
                best = (total, node, found)
        return best

    def total(self, what: str, name: str | None = None) -> int:
        """Sum over launches of ``loaded``/``stored`` elements (of argument ``name``, or of all)."""
        out = 0
        for launch in self.launches:
            counts = getattr(launch, what)
            out += sum(counts.values()) if name is None else counts.get(name, 0)
        return out

    def dot_tile_bytes(self) -> tuple:
        """``(bytes, kernel, {argument: (shape, element size)})`` of the program whose ``tl.dot`` operands,
        taken as loaded, need the most memory together: one tile of each argument, the largest (the q, k and v
        tiles of one step of an attention's loop, one pipeline stage). An operand computed lane by lane from a
        loaded tile (``q * scale``, ``k.to(tl.float32)``, ``tl.where(mask, k, 0)``, a transpose, two tiles
        joined) counts as that tile; a product's result (P of ``p @ v``) counts as none.
        A lower bound on the shared memory the compiled kernel asks of a GPU, where Triton stages the operands
        of its products (and pipelines the loads of a loop: two stages or more hold more); ``(0, "", {})``
        when no product took a loaded tile."""
        best = (0, "", {})
        for launch in self.launches:
            for tiles in launch.dot_tiles.values():
                total = sum(t[0] for t in tiles.values())
                if total > best[0]:
                    best = (total, launch.kernel, {n: t[1:] for n, t in tiles.items()})
        return best

    def dots(self) -> dict:
        shapes: dict = {}
        for launch in self.launches:
            for shape, count in launch.dot_shapes.items():
                shapes[shape] = shapes.get(shape, 0) + count
        return shapes

    def nonzero_products(self) -> dict:
        """As :meth:`products`, the count of products of two non-zero elements each pair of sources' dots made."""
        out: dict = {}
        for launch in self.launches:
            for (m, k, n, a, b), count in launch.dot_nonzero.items():
                out[frozenset((a, b))] = out.get(frozenset((a, b)), 0) + count
        return out

    def products(self) -> dict:
        """The ``tl.dot`` products by what they multiply: ``{(sources of one operand, sources of the other):
        [(M, K, N), ...] with one shape per dot}``. An operand's sources are the tensors (the address of each
        argument's first byte, the same in every launch of the call) whose loaded values it was computed from,
        through every operation of the kernel (casts, transposes, arithmetic, ``tl.where``, reductions): the
        score tile Q K^T is a product of (q) and (k), P V of (q, k, ...) and (v). The pair is unordered."""
        out: dict = {}
        for launch in self.launches:
            for (m, k, n, a, b), count in launch.dot_sources.items():
                out.setdefault(frozenset((a, b)), []).extend([(m, k, n)] * count)
        return out

    def widest_load(self, name: str | None = None) -> int:
        return max((w for launch in self.launches for n, w in launch.widest_load.items()
                    if name is None or n == name), default=0)

    def load_shapes(self, name: str) -> dict:
        shapes: dict = {}
        for launch in self.launches:
            for shape, count in launch.load_shapes.get(name, {}).items():
                shapes[shape] = shapes.get(shape, 0) + count
        return shapes

    def narrow_pid_offsets(self) -> int:
        """Loads and stores whose addresses were computed from a product of the program id in 32 bits
        (``pid * BLOCK`` before ``.to(tl.int64)``, or never widened): past 2^31 elements they wrap."""
        return sum(launch.narrow_pid_offsets for launch in self.launches)

    def wrapping_offsets(self, within_head: bool = False) -> tuple[int, str]:
        """Loads and stores whose addresses multiply a program id (or an index made from one) by a size or
        stride given at run time in 32 bits, and the first kernel that does it (see :class:`Launch`);
        ``within_head`` (attention): leaving out a block's rows times a stride where the address adds a head
        offset computed in 64 bits (see :func:`gpuperf.grading.frontend.wrapping_offsets`)."""
        count, kernel = ("wrapping_heads", "wrapping_heads_kernel") if within_head else \
            ("wrapping_offsets", "wrapping_kernel")
        total = sum(getattr(launch, count) for launch in self.launches)
        first = next((getattr(launch, kernel) for launch in self.launches if getattr(launch, count)), "")
        return total, first

    def tiled_elements(self, base: int, row_bytes: int) -> int:
        """Elements of a matrix at ``base`` (rows ``row_bytes`` apart) stored by 2-D blocks that span at least
        two rows and two columns of it: tiles, not one row reshaped into a 2-D block."""
        import numpy as np

        total = 0
        for launch in self.launches:
            for addresses in launch.blocks_2d:
                rel = addresses.astype(np.int64) - base
                rows, cols = rel // row_bytes, rel % row_bytes
                if np.unique(rows).size >= 2 and np.unique(cols).size >= 2:
                    total += int(addresses.size)
        return total

    def most_programs(self) -> int:
        """The most programs one launch ran (its grid)."""
        return max((launch.programs for launch in self.launches), default=0)

    def writers(self, start: int, end: int, keep=None, step: int = 0) -> list:
        """For each launch that wrote bytes ``[start, end)`` (stores or atomics): ``(launch, {program: distinct
        elements of the range it wrote}, distinct elements of the range written, longest run)``, in launch
        order, where the longest run is the most addresses ``step`` bytes apart, one after another, that one
        program wrote (0 without ``step``): the block a program owns, whether it stores it at once or in
        pieces. ``keep`` (addresses to a boolean mask) picks the addresses that count (a view's elements, not
        the gaps between its rows)."""
        import numpy as np

        out = []
        for launch in self.launches:
            if not launch.writes:
                continue
            addr, prog = launch.writes
            lo, hi = np.searchsorted(addr, np.uint64(start)), np.searchsorted(addr, np.uint64(end))
            addr, prog = addr[lo:hi], prog[lo:hi]
            if keep is not None and addr.size:
                picked = keep(addr)
                addr, prog = addr[picked], prog[picked]
            if addr.size:
                programs, counts = np.unique(prog, return_counts=True)
                distinct = 1 + int(np.count_nonzero(addr[1:] != addr[:-1]))
                run = 0
                if step:
                    order = np.lexsort((addr, prog))  # each program's addresses, in order
                    a, p = addr[order].astype(np.int64), prog[order]
                    breaks = np.flatnonzero((np.diff(a) != step) | (np.diff(p) != 0)) + 1
                    edges = np.concatenate(([0], breaks, [a.size]))
                    run = int(np.diff(edges).max())
                out.append((launch, dict(zip(programs.tolist(), counts.tolist())), distinct, run))
        return out

    def store_shapes(self) -> dict:
        shapes: dict = {}
        for launch in self.launches:
            for shape, count in launch.store_shapes.items():
                shapes[shape] = shapes.get(shape, 0) + count
        return shapes

    def stored_2d(self) -> int:
        return sum(launch.stored_2d for launch in self.launches)

    def stored_again(self, start: int, end: int) -> tuple:
        """Round 23: ``(address, launch index, other launch index or None)`` of the first byte address in
        ``[start, end)`` (an output of the call) that one program stored twice in one launch (other None), or
        that two launches both stored (a finished output written again: an unfinished value stored, read back
        and stored again); None when every address there was stored at most once."""
        import numpy as np

        first_seen: dict = {}
        found = None
        for i, launch in enumerate(self.launches):
            again, every = launch.stored_again, launch.stored_set
            if every is None or not every.size:
                continue
            lo, hi = np.searchsorted(every, [start, end])
            mine = every[lo:hi]
            if again is not None and again.size:
                a_lo, a_hi = np.searchsorted(again, [start, end])
                if a_hi > a_lo and (found is None or int(again[a_lo]) < found[0]):
                    found = (int(again[a_lo]), i, None)
            if mine.size:
                for j, earlier in first_seen.items():
                    both = np.intersect1d(earlier, mine, assume_unique=True)
                    if both.size and (found is None or int(both[0]) < found[0]):
                        found = (int(both[0]), j, i)
                first_seen[i] = mine
        return found

    def empty_products(self) -> tuple[int, str]:
        """Round 25 (22, 23): tile products one of whose operands was loaded with every lane masked off (a block
        of keys wholly past N_k, walked by a causal loop that ends at the diagonal without min(N_k, ...)): the
        product multiplies nothing. Only blocks loaded after the program's first product and used by at most three
        products count (a loop's blocks, not the program's own). Counted where one program made more than three (one empty block of keys
        costs the forward two products and the backward's dQ three; a loop unrolled by two blocks may end on one:
        round 26's h10). Products with an operand of zeros loaded from nothing but single elements count too,
        wherever they are (round 27's 32, 46). ``(how many, the first kernel that made them)``."""
        total, first = 0, ""
        for launch in self.launches:
            visits = launch.visits
            # per program, its products with an operand loaded wholly masked off, by that operand's loads: a
            # block loaded once the program had made products (a loop's later block), not the program's own
            # block of queries, which may lie wholly past N_q (the second half of the last block), loaded first
            # or, in a program that takes a second block, later, and used by every product of its loop
            uses: dict = {}
            for program, *operands in launch.dot_operand_loads:
                found = [frozenset(loads) for loads in operands
                         if loads and all(i < len(visits) and visits[i][5] is None and visits[i][4] > 0
                                          for i in loads)]
                for key in found:
                    uses[(program, key)] = uses.get((program, key), 0) + 1
            empty: dict = {}
            for program, *operands in launch.dot_operand_loads:
                if any(uses.get((program, frozenset(loads)), 99) <= 3 for loads in operands if loads):
                    empty[program] = empty.get(program, 0) + 1
            # an operand of zeros loaded from nothing but single elements (or nothing at all): a tile product
            # made in place of a block that was never loaded (round 27's 32, 46), which the GPU does all the same
            # (a block loaded wholly masked off is counted above, where a program's own second block of queries
            # past N_q is told apart: the domain's attention_kt)
            for program, loads in launch.dot_zero_operands:
                if all(i < len(visits) and visits[i][5] is not None and visits[i][5][0] == visits[i][5][1]
                       for i in loads):
                    empty[program] = empty.get(program, 0) + 1
            many = [count for count in empty.values() if count > 3]
            if many:
                total += sum(many)
                first = first or launch.kernel
        return total, first

    def race(self) -> str:
        """The first race found (see the module docstring), or ""."""
        return next((launch.race for launch in self.launches if launch.race), "")


def _program_label(index: int, grid) -> str:
    nx, ny, nz = grid
    x, rest = index % nx, index // nx
    y, z = rest % ny, rest // ny
    if ny == 1 and nz == 1:
        return f"program {x}"
    return f"program ({x}, {y}, {z})"


def _find_race(launch: Launch, grid) -> str:
    """Two programs storing to one address, or one reading what another stores, in one launch.

    A counter's draws (:func:`_tickets`: ``tl.atomic_add(counter, 1)``, every atomic on the counter an add of
    that one constant) are told from a partial sum's returned value: the values drawn are the same whatever
    order the programs run in, only who draws which changes, so what a program computes and writes with a draw
    (which tile, its rows, its causal mask) is no race as long as it depends on that draw alone, not on the
    program id as well (except through what a group drawing from one counter element shares), nor on a second
    draw (:func:`_ticket_race`). The reset of such a counter with an
    atomic exchange by the program that drew its final value, tested on that value (:func:`_resets`), is no
    race either. A partial sum's returned value that reaches a write stays one ("returned added")."""
    import numpy as np

    tickets = _tickets(launch)
    resets = _resets(launch, tickets)
    exchanges = [r for k, r in enumerate(launch._exchanges) if k not in resets]
    exchange = _two_programs(exchanges)
    if exchange is not None:
        address, a, b = exchange
        return _describe(launch, address, "exchanged", a, b, grid)
    writes = launch._stores + launch._exchanges
    if launch._stores and launch._adds:  # a plain store and an atomic of another program on one address
        mixed = _store_meets_atomic(launch._stores, launch._exchanges + launch._adds)
        if mixed is not None:
            address, a, b = mixed
            return _describe(launch, address, "mixed", a, b, grid)
    # an exchange (or compare-and-swap) of one program where another adds: which lands first decides the sum
    wiped = _atomic_read(launch._adds, exchanges)
    if wiped is not None:
        address, a, b = wiped
        used = (frozenset().union(*launch._who_writes, *(w for _, _, w, _ in launch._conditions)) & tickets
                if launch._who_writes or launch._conditions else frozenset())
        counter = any(address in launch._returned[i][0] for i in used)
        return _describe(launch, address, "counter reset" if counter else "exchange meets add", a, b, grid)
    added = _atomic_read(launch._adds, launch._loads)
    if added is not None:
        address, a, b = added
        return _describe(launch, address, "read added", a, b, grid)
    # an atomic's returned value (what was there before it) that reaches what the program writes reads the
    # other programs' adds as a load does; one that only steers control flow is not counted, nor a counter's
    # draw (checked by _ticket_race)
    used = [launch._returned[i] for i in sorted(launch._used_returns) if i not in tickets]
    returned = _atomic_read(launch._adds, used)
    if returned is not None:
        address, a, b = returned
        return _describe(launch, address, "returned added", a, b, grid)
    drawn = _ticket_race(launch, tickets, grid) or _read_back_race(launch, tickets, grid)
    if drawn:
        return drawn
    if not writes:
        return ""
    s_addr = np.concatenate([a for a, _ in writes])
    s_prog = np.concatenate([np.full(a.shape, p, dtype=np.int64) for a, p in writes])
    order = np.lexsort((s_prog, s_addr))
    s_addr, s_prog = s_addr[order], s_prog[order]
    same = (s_addr[1:] == s_addr[:-1]) & (s_prog[1:] != s_prog[:-1])
    if same.any():
        i = int(np.argmax(same))
        return _describe(launch, int(s_addr[i]), "stored to", int(s_prog[i]), int(s_prog[i + 1]), grid)
    # one owner per stored address from here on
    first = np.ones(s_addr.shape, dtype=bool)
    first[1:] = s_addr[1:] != s_addr[:-1]
    u_addr, u_prog = s_addr[first], s_prog[first]
    for addresses, program in launch._loads:
        idx = np.searchsorted(u_addr, addresses)
        idx = np.clip(idx, 0, max(u_addr.size - 1, 0))
        hit = (u_addr[idx] == addresses) & (u_prog[idx] != program)
        if hit.any():
            j = int(np.argmax(hit))
            return _describe(launch, int(addresses[j]), "read", int(u_prog[idx[j]]), program, grid)
    return ""


def _tickets(launch: Launch) -> set:
    """The draws of counters among a launch's atomics (indices into :attr:`Launch._returned`): adds of a constant
    (:attr:`Launch._constant_adds`, not 0) to elements that no other add of the launch reaches, neither one of
    computed values nor one of another constant. Whatever order the programs run in, the values a counter returns
    are its start plus 0, 1, 2, ... times the constant: only which program draws which value changes."""
    import numpy as np

    if not launch._constant_adds:
        return set()
    exchanged = {i for i, _, _ in launch._exchange_info}
    plain = [launch._returned[i][0] for i in range(len(launch._returned))
             if i not in exchanged and i not in launch._constant_adds]
    plain = np.unique(np.concatenate(plain)) if plain else np.empty(0, dtype=np.uint64)
    by_constant: dict = {}
    for i, constant in launch._constant_adds.items():
        by_constant.setdefault(constant, []).append(launch._returned[i][0])
    merged = {c: np.unique(np.concatenate(a)) for c, a in by_constant.items()}
    found = set()
    for i, constant in launch._constant_adds.items():
        addresses = launch._returned[i][0]
        if np.isin(addresses, plain).any():
            continue
        if any(np.isin(addresses, m).any() for c, m in merged.items() if c != constant):
            continue
        found.add(i)
    return found


#: the per-program records of a :class:`Launch` that :func:`_split_at_draws` renumbers: (attribute, the place of
#: the program in each entry)
_SEGMENTED = (("spans", 1), ("visits", 1), ("store_marks", 1), ("dot_marks", 0), ("dot_loads", 0),
              ("dot_operand_loads", 0), ("dot_zero_operands", 0), ("_lineage_loads", 1), ("_lineage_writes", 1), ("_write_log", 0),
              # round 28's review: split-K drawing tickets writes (and adds) once per ticket, not all in program 0
              ("_value_adds", 1), ("_stores", 1), ("_adds", 1), ("_exchanges", 1), ("_value_stores", 1),
              ("_value_atomics", 1), ("_bitwise", 1))


def _split_at_draws(launch: Launch, tickets: set) -> None:
    """Where programs draw their work from a counter (:func:`_tickets`), record each draw's work as a program of
    its own: what a program did for a draw gets a new number (from the grid's size up), in the loads, visits,
    stores, products and lineage the graders count per program. Under the interpreter the first program runs
    first and draws every ticket; on a GPU the draws spread over all the programs, and one draw's work is what
    one of them does (a persistent kernel with a ticket scheduler walks one block of queries a draw, not every
    block in program 0). The race checks ran before, on the programs as launched.

    A program's records are cut at each of its draws, and each stretch between two draws goes to the one draw its
    writes depend on, not to the draw it follows: a scheduler that fetches the next ticket before it stores the
    current item (FlashAttention-3's prefetch) writes item ``cur`` after drawing ``nxt``. A stretch that writes
    nothing goes with the next stretch that writes (loads for an item made before the next draw), and one after
    the program's last write stays the program's own. The programs stay as launched where a stretch writes with
    two draws, or with something a program chose and no draw (its program id), or where one draw's stretches are
    not consecutive, or where a draw's counter element is drawn by one program only (its values are 0, 1, 2, ...
    in that program's order, a counter of its own: nothing spreads its work): so a dummy draw between two passes
    over K cannot make them two programs' single passes (the second pass's write would depend on the draw that
    chose the item, and the first pass's stretch then goes with it)."""
    import bisect

    import numpy as np

    if not tickets or not launch._who_writes:
        return
    drawers: dict = {}
    for i in tickets:
        addresses, program = launch._returned[i]
        for address in np.unique(addresses).tolist():
            drawers.setdefault(address, set()).add(program)
    shared = {i for i in tickets if all(len(drawers[a]) > 1 for a in np.unique(launch._returned[i][0]).tolist())}
    by_program: dict = {}
    for index, program, lengths in launch._draw_marks:
        if index in tickets:
            by_program.setdefault(program, []).append(lengths)
    cuts = {p: [lengths["_write_log"] for lengths in ms] for p, ms in by_program.items()}
    owners = {p: [set() for _ in ms] for p, ms in by_program.items()}
    for i, (program, who) in enumerate(launch._write_log):
        k = bisect.bisect_right(cuts[program], i) if program in cuts else 0
        if not k or not who:  # before the program's first draw, or a constant (a counter's reset)
            continue
        drawn = who & tickets
        if not drawn:
            return  # a write of the program's own (its program id) between draws
        owners[program][k - 1] |= drawn
    plan: dict = {}
    for program, stretches in owners.items():
        if any(len(s) > 1 for s in stretches):
            return
        seq = [min(s) if s else None for s in stretches]
        following = None
        for k in range(len(seq) - 1, -1, -1):  # a stretch without writes goes with the next one that writes
            if seq[k] is None:
                seq[k] = following
            else:
                following = seq[k]
        order = [o for k, o in enumerate(seq) if o is not None and (k == 0 or seq[k - 1] != o)]
        if len(order) != len(set(order)) or any(o not in shared for o in order):
            return
        plan[program] = seq
    first = math.prod(int(n) for n in launch.grid)
    number = {o: first + k for k, o in enumerate(sorted({o for seq in plan.values() for o in seq if o is not None}))}
    if not number:
        return
    launch.ticket_draws = len(number)
    for attribute, place in _SEGMENTED:
        entries = getattr(launch, attribute)
        cuts = {p: [lengths[attribute] for lengths in ms] for p, ms in by_program.items()}
        for i, entry in enumerate(entries):
            program = entry[place]
            if program not in plan:
                continue
            k = bisect.bisect_right(cuts[program], i)
            if k and plan[program][k - 1] is not None:
                entry = list(entry)
                entry[place] = number[plan[program][k - 1]]
                entries[i] = tuple(entry)
    per_program: dict = {}
    for (name, program, _, _), worth in zip(launch.spans, launch.span_worth):
        counts = per_program.setdefault(name, {})
        counts[program] = counts.get(program, 0) + worth
    launch.per_program = per_program
    dots: dict = {}
    for program, _ in launch.dot_marks:
        dots[program] = dots.get(program, 0) + 1
    launch.dots_run = dots


def _resets(launch: Launch, tickets: set) -> set:
    """The atomic exchanges (indices into :attr:`Launch._exchanges`) that reset a counter correctly on a GPU:
    the only exchange of its elements in the launch, of a constant, by the program that drew the counter's final
    value (the last draw, after which no atomic reaches the counter), and after that program tested that draw in
    an ``if`` or ``while`` (the counter says every other program has drawn), testing nothing made from its
    program id on the way (``if pid == num_programs - 1``, "the program believed to run last", passes under the
    interpreter, where it does run last, and is a race on a GPU)."""
    import numpy as np

    if not tickets or not launch._exchange_info:
        return set()
    order = launch._atomic_order
    counters = np.unique(np.concatenate([launch._returned[i][0] for i in tickets]))
    allowed = set()
    for k, (index, who, constant) in enumerate(launch._exchange_info):
        addresses, program = launch._returned[index]
        if not constant or _PROGRAM_ID in who or not np.isin(addresses, counters).all():
            continue
        if any(np.isin(launch._returned[j][0], addresses).any() for j, _, _ in launch._exchange_info
               if j != index):
            continue  # several exchanges of the counter: the race checks name them
        reached = [j for j in range(len(launch._returned))
                   if j != index and np.isin(launch._returned[j][0], addresses).any()]
        draws = [j for j in reached if j in tickets]
        if not draws or len(draws) != len(reached):
            continue
        final = max(draws, key=lambda j: order[j])
        if launch._returned[final][1] != program or order[final] > order[index]:
            continue  # another program draws after it, or it resets before its own draw
        if who - {final}:
            continue
        tested = [(w, truth) for at, p, w, truth in launch._conditions
                  if p == program and order[final] < at < order[index]]
        if any(_PROGRAM_ID in w for w, _ in tested) or not any(final in w for w, truth in tested
                                                                 if truth is not None):
            continue
        allowed.add(k)
    return allowed


def _ticket_race(launch: Launch, tickets: set, grid) -> str:
    """A counter's draw used where it is not a ticket: a write (its value, address or mask) that depends on a
    draw and also on the program id (x loaded at the program's rows, stored at the draw's rows: on a GPU any
    program may draw any value) or on a second draw (the pairs drawn change with the order), or a draw that a
    program drops, neither writing with it nor ending with it (a program that draws twice and works on the
    first value and the next one, as if it had drawn both).

    The draws of one counter element are a permutation among the programs that draw from it (its group: with
    ``counter + pid // SPLITS`` the programs of one ``pid // SPLITS``). A write may depend on a draw and on the
    program id where every node the program id reached it through (:func:`_pid_atoms`) has one value in all the
    programs of the draw's group (:func:`_same_in`): the write is then a function of the group and the draw, and
    the set of them done is the same in any order. The same holds for the control flow after a draw (an ``if``,
    a ``while``, a loop's bounds) decided by the program id: the values written need not show it."""
    import numpy as np

    if not tickets:
        return ""
    for who, program in launch._who_writes.items():
        drawn = sorted(who & tickets)
        if len(drawn) > 1:
            address = int(launch._returned[drawn[0]][0][0])
            why = ("together with a second value it drew: which values one program draws is not fixed on a GPU, "
                   "so a write that depends on two pairs them at random")
            return _describe_ticket(launch, address, program, grid, why)
    # a draw and the program id: the programs that draw from one counter element (a group: ``cnt + pid //
    # SPLITS``) share its values in any order, so the write may depend on the program id only through values
    # that are the same in all of them (the group), never through one that tells them apart
    groups: dict = {}
    for i in tickets:
        addresses, program = launch._returned[i]
        if addresses.size == 1:
            groups.setdefault(int(addresses[0]), set()).add(program)
    # a group is the programs that draw from the element whatever the order: not where a program's first draw
    # from it came under an if, while or loop bound decided by a draw from another element (which programs reach
    # it then changes with who drew what)
    first: dict = {}
    for i in tickets:
        addresses, program = launch._returned[i]
        key = (program, int(addresses[0]))
        if key not in first or launch._atomic_order[i] < launch._atomic_order[first[key]]:
            first[key] = i
    for (program, element), i in first.items():
        if element not in groups:
            continue
        for at, p, who, _ in launch._conditions:
            if p == program and at < launch._atomic_order[i] and \
                    any(int(launch._returned[j][0][0]) != element for j in who & tickets):
                groups[element] = set()  # no group: the program id may not be used with its draws
                break
    memos: dict = {}
    for (who, atoms), program in launch._pid_writes.items():
        drawn = sorted(who & tickets)
        if len(drawn) != 1:
            continue
        addresses = launch._returned[drawn[0]][0]
        group = frozenset(groups.get(int(addresses[0]), ())) if np.asarray(addresses).size == 1 else frozenset()
        if group and _same_in(launch, atoms, group, memos.setdefault(group, {})):
            continue
        why = ("together with its program id (what it computed or loaded from it) in a way that differs between "
               "the programs that draw from that counter element: which program draws which value is not fixed "
               "on a GPU, so a write that depends on both pairs them at random")
        return _describe_ticket(launch, int(addresses[0]), program, grid, why)
    # control flow after a draw decided by the program id (a loop's bounds, an if): what the program does for its
    # draw then depends on the program id too, which the values written need not show
    drawn_by: dict = {}
    for i in tickets:
        drawn_by.setdefault(launch._returned[i][1], []).append(i)
    for at, program, atoms in launch._pid_conditions:
        before = [i for i in drawn_by.get(program, ()) if launch._atomic_order[i] < at]
        if not before:
            continue
        latest = max(before, key=lambda i: launch._atomic_order[i])
        addresses = launch._returned[latest][0]
        group = frozenset(groups.get(int(addresses[0]), ())) if np.asarray(addresses).size == 1 else frozenset()
        if group and _same_in(launch, atoms, group, memos.setdefault(group, {})):
            continue
        why = ("and then decided what to do with its program id (an if, a while or a loop's bounds: range(lo, hi)) "
               "in a way that differs between the programs that draw from that counter element: which program "
               "draws which value is not fixed on a GPU, so the work done for a value depends on who drew it")
        return _describe_ticket(launch, int(addresses[0]), program, grid, why)
    written = frozenset().union(*launch._who_writes) & tickets
    last: dict = {}
    for i in sorted(tickets):
        addresses, program = launch._returned[i]
        last[(program, int(addresses[0]))] = i
    for i in sorted(tickets):
        addresses, program = launch._returned[i]
        if i not in written and last[(program, int(addresses[0]))] != i:
            return _describe_ticket(launch, int(addresses[0]), program, grid,
                                    "and then drew again without using it in anything it wrote: the value it "
                                    "skipped is nobody's on a GPU, where draws of programs interleave (a program "
                                    "that draws twice gets two values far apart, not one and the next)")
    return ""


def _read_back_race(launch: Launch, tickets: set, grid) -> str:
    """A program that reads back what it stored in the same launch at an address chosen by other draws than the
    store's (a store at its program id's rows, a load at its draw's; or the reverse). Under the interpreter the
    programs draw in grid order, and with a counter per group each program draws the split its program id names,
    so the two addresses agree and the program reads its own store; on a GPU another program draws that value,
    and the read meets another program's store (or none yet). The race checks of two programs see none of it."""
    import numpy as np

    if not tickets or not launch._stores:
        return ""
    stores: dict = {}
    for (addresses, program), where in zip(launch._stores, launch._store_where):
        stores.setdefault(program, []).append((addresses, where & tickets))
    merged = {p: np.unique(np.concatenate([a for a, _ in entries])) for p, entries in stores.items()}
    for (addresses, program), where in zip(launch._loads, launch._load_where):
        mine = merged.get(program)
        if mine is None or not np.isin(addresses, mine).any():
            continue
        drawn = where & tickets
        for stored, stored_drawn in stores[program]:
            if stored_drawn == drawn:
                continue
            hit = np.isin(addresses, stored)
            if hit.any():
                counter = min(drawn | stored_drawn)
                address = int(addresses[int(np.argmax(hit))])
                where_read = f"address {address:#x}"
                for name, start, end, es, _ in launch.args:
                    if start <= address < end:
                        where_read = f"element {(address - start) // es} of {name}"
                        break
                why = (f"to choose where it read back {where_read}, which it had stored in this launch at an "
                       "address chosen by another value (its program id, or another draw): under the interpreter "
                       "the programs draw in grid order and the two addresses agree; on a GPU another program may "
                       "draw that value, and the read meets that program's store, or none yet")
                return _describe_ticket(launch, int(launch._returned[counter][0][0]), program, grid, why)
    return ""


def _describe_ticket(launch: Launch, address: int, program: int, grid, why: str) -> str:
    where = f"address {address:#x}"
    for name, start, end, es, _ in launch.args:
        if start <= address < end:
            where = f"element {(address - start) // es} of {name}"
            break
    return (f"a race in your kernel {launch.kernel}: {_program_label(program, grid)} used the value its atomic "
            f"returned at {where} (a counter every program adds the same constant to: a ticket) {why}. The programs "
            "of a launch run in any order on a GPU (under the interpreter they run one after another in grid "
            "order, so the first program draws the first value). Work out everything a program does for a ticket "
            "from the ticket alone (its tile, rows, mask and addresses), as a persistent kernel with dynamic "
            "scheduling does; with a counter per group of programs (`counter + pid // SPLITS`), from the ticket and "
            "what the group's programs have in common (the function of the program id that chose the counter)")


def _two_programs(records):
    """The first address that two programs of ``records`` ((addresses, program) pairs) both reach, with the
    two programs, or None."""
    import numpy as np

    if not records:
        return None
    addr = np.concatenate([a for a, _ in records])
    prog = np.concatenate([np.full(a.shape, p, dtype=np.int64) for a, p in records])
    order = np.lexsort((prog, addr))
    addr, prog = addr[order], prog[order]
    same = (addr[1:] == addr[:-1]) & (prog[1:] != prog[:-1])
    if not same.any():
        return None
    i = int(np.argmax(same))
    return int(addr[i]), int(prog[i]), int(prog[i + 1])


def _atomic_read(adds, loads):
    """The first address that a program reaches with a record of ``loads`` ((addresses, program) pairs: its
    loads, its exchanges, or the elements whose old values its atomics returned and it used) while another
    program of the same launch updates it with an accumulating atomic (add, max, ...) of ``adds``, as (address,
    the atomic's program, the reader), or None."""
    import numpy as np

    if not adds or not loads:
        return None
    addr = np.concatenate([a for a, _ in adds])
    prog = np.concatenate([np.full(a.shape, p, dtype=np.int64) for a, p in adds])
    order = np.argsort(addr, kind="stable")
    addr, prog = addr[order], prog[order]
    u_addr, start = np.unique(addr, return_index=True)
    low = np.minimum.reduceat(prog, start)  # the lowest and highest program that adds to each address
    high = np.maximum.reduceat(prog, start)
    for addresses, program in loads:
        idx = np.clip(np.searchsorted(u_addr, addresses), 0, u_addr.size - 1)
        hit = (u_addr[idx] == addresses) & ((low[idx] != program) | (high[idx] != program))
        if hit.any():
            j = int(np.argmax(hit))
            writer = int(low[idx[j]]) if int(low[idx[j]]) != program else int(high[idx[j]])
            return int(addresses[j]), writer, program
    return None


def _store_meets_atomic(stores, atomics):
    import numpy as np

    a_addr = np.concatenate([a for a, _ in atomics])
    a_prog = np.concatenate([np.full(a.shape, p, dtype=np.int64) for a, p in atomics])
    for addresses, program in stores:
        hit = np.isin(a_addr, addresses) & (a_prog != program)
        if hit.any():
            j = int(np.argmax(hit))
            return int(a_addr[j]), program, int(a_prog[j])
    return None


def _describe(launch: Launch, address: int, what: str, writer: int, other: int, grid) -> str:
    where = f"address {address:#x}"
    for name, start, end, es, _ in launch.args:
        if start <= address < end:
            where = f"element {(address - start) // es} of {name}"
            break
    a, b = _program_label(writer, grid), _program_label(other, grid)
    if what == "exchanged":
        return (f"a race in your kernel {launch.kernel}: {a} and {b} both wrote {where} with an atomic exchange "
                "or compare-and-swap. Each write is atomic, but a value read before it (a load, then an exchange "
                "of the loaded value plus a contribution) is stale as soon as another program writes: on a GPU, "
                "where programs run at the same time, updates are lost. Add contributions with an atomic add, "
                "or give every program its own output elements (a separate dQ kernel)")
    if what == "mixed":
        return (f"a race in your kernel {launch.kernel}: {a} stored to {where} with a plain store while {b} "
                "updated it with an atomic. On a GPU nothing orders the two programs: the plain store can land "
                "after the atomic updates and wipe them out. Start from memory that is already zero (allocate "
                "it zeroed) and let every program add with an atomic")
    if what == "stored to":
        return (f"a race in your kernel {launch.kernel}: {a} and {b} both stored to {where} without an atomic. "
                "Under the interpreter programs run one after another, so the result can look right; on a GPU "
                "they run at the same time and one store overwrites the other. Give every program its own "
                "output elements, or add with an atomic add")
    if what == "exchange meets add":
        return (f"a race in your kernel {launch.kernel}: {b} wrote {where} with an atomic exchange (or "
                f"compare-and-swap) while {a} of the same launch adds to it with an atomic add. The programs of a "
                "launch run in any order on a GPU: an add that lands before the exchange is wiped out by it (under "
                "the interpreter programs run one after another in grid order, which hides it). Start from memory "
                "that is already zero (allocate it with torch.zeros), let every program add with an atomic add, "
                "and read the sum in a later launch")
    if what == "counter reset":
        return (f"a race in your kernel {launch.kernel}: {b} reset {where} with an atomic exchange while {a} of the "
                "same launch draws from it with an atomic add (a ticket counter). The programs of a launch run in "
                "any order on a GPU: a program that resets the counter because it believes it runs last (under the "
                "interpreter programs run one after another in grid order, so the last one does) may reset it "
                "while others still draw, and tickets are handed out twice. Reset it only in the program whose draw "
                "returned the counter's final value, tested on that value (every program draws once past the "
                "work: `if ticket == total + tl.num_programs(0) - 1`), or zero the counter before the launch "
                "(torch.zeros)")
    if what == "returned added":
        return (f"a race in your kernel {launch.kernel}: {b} used the value its atomic returned at {where} (what "
                f"was there before its own update; an add of 0 that reads a buffer reads it too) in what it wrote, "
                f"and {a} of the same launch adds to that element with an atomic. The programs of a launch run in "
                "any order on a GPU: the returned value holds only the adds that happened to land before, not "
                "every program's share (under the interpreter programs run one after another in grid order, so "
                "the program you expect to run last does). Let every program only add, and read the sum in a "
                "later launch (a second kernel, or a torch operation such as .to(dtype) on the buffer)")
    if what == "read added":
        return (f"a race in your kernel {launch.kernel}: {b} read {where}, which {a} of the same launch adds to "
                "with an atomic. On a GPU nothing orders two programs of one launch: the read can come before "
                "other programs have added their share, and sees a partial sum (under the interpreter programs "
                "run one after another, so the last one sees every add). Read a buffer that programs add to in "
                "a later launch (a second kernel that converts or uses the sum)")
    return (f"a race in your kernel {launch.kernel}: {b} read {where}, which {a} of the same launch writes. On a "
            "GPU nothing orders two programs of one launch, so the value read may be the old one or the new "
            "one; read only what your own program writes, or split the work into two launches")


def _link(trace: Trace, launch: Launch) -> None:
    """Record which programs of earlier launches each program of ``launch`` read from (its loads of what they
    stored last) and the lineage of what it read (:attr:`Launch.read_lineage`), then make ``launch`` the last
    writer of what it stored, with the lineage of each value: the loads it was computed from, as ``(launch
    index, argument's first byte)``, and the lineage of what those loads read from earlier launches."""
    import numpy as np

    index = len(trace.launches)
    launch.index = index
    loaded: dict = {}  # (program, argument's first byte): the lineage of what it loaded there from earlier launches
    if trace._written:
        w_addr, w_owner, w_lineage, w_width = _records(trace)
        for addresses, program, base, width in launch._lineage_loads:
            # every write recorded in the bytes each lane reads (a 4-byte load of an fp32 whose low byte a fill
            # overwrote still reads the three bytes the kernel wrote)
            _, rec = _overlapping(w_addr, w_width, addresses, width or 1)
            if rec.size:
                pairs = np.unique(np.stack((w_owner[rec], w_lineage[rec])), axis=1)
                launch.sources.setdefault(program, set()).update(int(o) for o in np.unique(pairs[0]))
                into = loaded.setdefault((program, base), set())
                for owner, lineage in pairs.T.tolist():
                    read = trace._lineages[lineage]
                    into |= read
                    key = (program, owner)
                    launch.read_lineage[key] = launch.read_lineage.get(key, frozenset()) | read
    if not launch._lineage_writes:
        return
    ids = []
    for _, program, sources, _ in launch._lineage_writes:
        lineage = {(index, base) for base in sources}
        for base in sources:
            lineage |= loaded.get((program, base), set())
        lineage = frozenset(lineage)
        if lineage not in trace._lineage_ids:
            trace._lineage_ids[lineage] = len(trace._lineages)
            trace._lineages.append(lineage)
        ids.append(trace._lineage_ids[lineage])
    writes = launch._lineage_writes
    addr = np.concatenate([a.astype(np.int64) for a, _, _, _ in writes])
    owner = np.concatenate([np.full(a.shape, (index << 32) | p, dtype=np.int64) for a, p, _, _ in writes])
    lineage = np.concatenate([np.full(a.shape, i, dtype=np.int64) for (a, _, _, _), i in zip(writes, ids)])
    width = np.concatenate([np.full(a.shape, w, dtype=np.int64) for a, _, _, w in writes])
    written = _records(trace)
    if written:  # the bytes this launch wrote are its own now; the rest of a value partly overwritten is not
        lows, highs = _byte_runs(addr, width)
        written = _trim(written, lows, highs)
    _put(trace, _insert(written, addr, owner, lineage, width))


#: the most bytes one record of :attr:`Trace._written` spans (a wider write is recorded in pieces, :func:`_pieces`)
_PIECE = 4


def _records(trace):
    """The records of :attr:`Trace._written` with the bytes each spans (:attr:`Trace._written_bytes`): (address,
    owner, lineage, bytes); where none are kept (set without them), :data:`_PIECE` bytes each."""
    written = trace._written
    if not written:
        return written
    width = trace._written_bytes
    if width is None or width.shape != written[0].shape:
        import numpy as np

        width = np.full(written[0].shape, _PIECE, dtype=np.int64)
    return tuple(written[:3]) + (width,)


def _put(trace, records) -> None:
    """Set :attr:`Trace._written` and :attr:`Trace._written_bytes` from ``records`` (:func:`_records`)."""
    if not records or not len(records[0]):  # nothing left written (a fill over every write): no records at all
        trace._written, trace._written_bytes = (), None
        return
    trace._written, trace._written_bytes = tuple(records[:3]), records[3]


def _byte_runs(starts, size):
    """``(lows, highs)``: the disjoint byte ranges ``[low, high)``, sorted, that ``size`` bytes (a number, or
    one per start) from each of ``starts`` cover."""
    import numpy as np

    starts = np.asarray(starts).astype(np.int64).reshape(-1)
    ends = starts + np.broadcast_to(np.asarray(size, dtype=np.int64), starts.shape)
    if not starts.size:
        return starts, ends
    order = np.argsort(starts, kind="stable")
    starts, ends = starts[order], np.maximum.accumulate(ends[order])
    new = np.ones(starts.shape, dtype=bool)
    new[1:] = starts[1:] > ends[:-1]
    heads = np.flatnonzero(new)
    return starts[heads], ends[np.append(heads[1:] - 1, starts.size - 1)]


def _trim(written, lows, highs):
    """``written`` (:attr:`Trace._written`) with the bytes in ``[lows, highs)`` (:func:`_byte_runs`) overwritten:
    a record wholly inside is gone, one partly inside keeps its other bytes (as records of one byte each)."""
    import numpy as np

    if not written or not lows.size or not written[0].size:
        return written
    addr, owner, lineage, width = written
    a = addr.astype(np.int64)
    end = a + width
    pos = np.searchsorted(lows, a, side="right") - 1  # the last range starting at or before each record
    at = np.clip(pos, 0, None)
    nxt = np.clip(pos + 1, 0, lows.size - 1)
    inside = (pos >= 0) & (end <= highs[at])
    touched = ((pos >= 0) & (a < highs[at])) | ((pos + 1 < lows.size) & (lows[nxt] < end))
    if not touched.any():
        return written
    keep = ~touched
    kept = [addr[keep], owner[keep], lineage[keep], width[keep]]
    partial = np.flatnonzero(touched & ~inside)
    if partial.size:  # the bytes of a value still as its writer left them keep the writer
        w = width[partial]
        rec = np.repeat(partial, w)
        byte = np.repeat(a[partial], w) + (np.arange(int(w.sum())) - np.repeat(np.cumsum(w) - w, w))
        bp = np.searchsorted(lows, byte, side="right") - 1
        left = ~((bp >= 0) & (byte < highs[np.clip(bp, 0, None)]))
        rec, byte = rec[left], byte[left]
        kept = [np.concatenate([kept[0], byte.astype(addr.dtype)]), np.concatenate([kept[1], owner[rec]]),
                np.concatenate([kept[2], lineage[rec]]), np.concatenate([kept[3], np.ones(byte.shape, width.dtype)])]
        order = np.argsort(kept[0], kind="stable")
        kept = [k[order] for k in kept]
    return tuple(kept)


def _insert(written, addr, owner, lineage, width):
    """``written`` (:attr:`Trace._written`, already trimmed of the bytes of the new writes) with the records
    ``addr``, ``owner``, ``lineage``, ``width`` (bytes) added; of several at one address the last stays."""
    import numpy as np

    addr = np.asarray(addr).astype(np.uint64)
    width = np.asarray(width).astype(np.int64)
    if written:
        addr = np.concatenate([written[0], addr])
        owner = np.concatenate([written[1], owner])
        lineage = np.concatenate([written[2], lineage])
        width = np.concatenate([written[3], width])
    order = np.argsort(addr, kind="stable")
    addr, owner, lineage, width = addr[order], owner[order], lineage[order], width[order]
    last = np.ones(addr.shape, dtype=bool)  # the latest write of each address
    last[:-1] = addr[1:] != addr[:-1]
    return (addr[last], owner[last], lineage[last], width[last])


def _overlapping(w_addr, w_width, starts, size):
    """``(lane, record)``: the index pairs of the elements of ``size`` bytes at ``starts`` and the records of
    :attr:`Trace._written` (``w_addr``, ``w_width``) holding some of their bytes."""
    import numpy as np

    a = np.asarray(starts).astype(np.int64).reshape(-1)
    lo = np.searchsorted(w_addr, np.clip(a - (_PIECE - 1), 0, None).astype(np.uint64))
    hi = np.searchsorted(w_addr, (a + int(size)).astype(np.uint64))
    counts = np.maximum(hi - lo, 0)
    if not counts.any():
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    lane = np.repeat(np.arange(a.size), counts)
    rec = np.repeat(lo, counts) + (np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts))
    ok = w_addr[rec].astype(np.int64) + w_width[rec] > a[lane]
    return lane[ok], rec[ok]


def _own_atomic_marks(launch: Launch) -> None:
    """Keep of each atomic's mark (:attr:`Launch.store_marks`) the addresses that no other program of the launch
    writes: its lowest and highest of them, or no mark where none is left (a program that adds zeros to rows
    another program owns has not written them; dQ rows that every block of keys adds to are no program's)."""
    import numpy as np

    marks, launch._atomic_marks = launch._atomic_marks, []
    if not marks or not launch.writes:
        return
    addr, _ = launch.writes  # distinct (address, program) pairs, sorted by address
    shared = np.unique(addr[1:][addr[1:] == addr[:-1]])
    if not shared.size:
        return
    dropped = set()
    for place, addresses in marks:
        own = addresses[~np.isin(addresses, shared)]
        if own.size:
            name, program, at, _, _ = launch.store_marks[place]
            launch.store_marks[place] = (name, program, at, int(own[0]), int(own[-1]))
        else:
            dropped.add(place)
    if dropped:
        launch.store_marks = [m for i, m in enumerate(launch.store_marks) if i not in dropped]


def _note_still_store(launch, addresses, active, value, program, unique) -> None:
    """Record the lanes of a store that set a value (:attr:`Launch._value_stores`), and count those that store
    back, unchanged, what the program loaded from the same address (``tl.store(p, tl.load(p))``): memory is left
    as it was, and the value stays the one its last writer computed."""
    import numpy as np

    same = np.zeros(addresses.shape, dtype=bool)
    for origin, loaded in _attr(value, "_gpuperf_lanes_from", None) or ():
        if origin.shape == addresses.shape:
            same |= loaded & (origin.astype(np.uint64) == addresses)
    still = active & same
    if not still.any():  # every lane may set a value (``unique``: the active lanes' addresses)
        launch._value_stores.append((unique, program))
        return
    launch._value_stores.append((np.unique(addresses[active & ~same]), program))
    launch._still_lanes += int(np.count_nonzero(still))


def _note_still_lanes(launch, args, res, program, lanes, cas: bool) -> None:
    """Record the lanes of an atomic (``create_atomic_rmw(op, ptr, val, mask, ...)`` or ``create_atomic_cas(ptr,
    cmp, val, ...)``, returning what was there) that set a value (:attr:`Launch._value_atomics`), and count those
    that left memory as it was (:attr:`Launch._still_lanes`): an add of 0 (or of a value below the sum's
    rounding), a max or min that keeps what is there, an exchange for the same value. Such an atomic is no new
    writer of the value: the value stays the one its last writer computed (a compare-and-swap always counts)."""
    import numpy as np

    ptrs, mask = (args[0], None) if cas else (args[1], args[3] if len(args) > 3 else None)
    try:
        addresses, active = lanes(ptrs, mask)
    except Exception:  # pragma: no cover - another layout
        return
    same = np.zeros(addresses.shape, dtype=bool)
    if not cas:
        try:
            op = getattr(args[0], "name", str(args[0]).rsplit(".", 1)[-1]).upper()
            old = np.broadcast_to(np.asarray(res.data), addresses.shape)
            new = np.broadcast_to(np.asarray(args[2].data), addresses.shape).astype(old.dtype)
            with np.errstate(all="ignore"):
                after = {"ADD": np.add, "FADD": np.add, "MAX": np.maximum, "MIN": np.minimum,
                         "XCHG": lambda o, n: n}.get(op, lambda o, n: None)(old, new)
            if after is not None:
                same = np.asarray(after).astype(old.dtype) == old
        except Exception:  # pragma: no cover - another layout: every lane counts as a write
            same = np.zeros(addresses.shape, dtype=bool)
    launch._value_atomics.append((np.unique(addresses[active & ~same]), program))
    launch._still_lanes += int(np.count_nonzero(active & same))


def _repeated_stores(records) -> tuple:
    """``(again, every)`` of a launch's plain stores (``(addresses, program)`` records, each store's active lanes,
    distinct within the record): the sorted addresses some program stored more than once, and all the sorted
    distinct addresses stored."""
    import numpy as np

    if not records:
        empty = np.zeros(0, dtype=np.uint64)
        return empty, empty
    addr = np.concatenate([a.astype(np.uint64) for a, _ in records])
    prog = np.concatenate([np.full(a.shape, p, dtype=np.int64) for a, p in records])
    order = np.lexsort((prog, addr))
    addr, prog = addr[order], prog[order]
    twice = (addr[1:] == addr[:-1]) & (prog[1:] == prog[:-1])
    return np.unique(addr[1:][twice]), np.unique(addr)


def _distinct_writes(records) -> tuple:
    """``(addresses, programs)``: the distinct pairs of ``records`` ((addresses, program) pairs), sorted by
    address; () for none."""
    import numpy as np

    if not records:
        return ()
    addr = np.concatenate([a.astype(np.uint64) for a, _ in records])
    prog = np.concatenate([np.full(a.shape, p, dtype=np.int64) for a, p in records])
    order = np.lexsort((prog, addr))
    addr, prog = addr[order], prog[order]
    keep = np.ones(addr.shape, dtype=bool)
    keep[1:] = (addr[1:] != addr[:-1]) | (prog[1:] != prog[:-1])
    return addr[keep], prog[keep]


def _layout_bytes(layout) -> tuple:
    """``(first byte, end)`` of the elements of ``layout`` ((storage address, element size, shape, strides,
    offset in elements), with every size above 0)."""
    ptr, es, shape, stride, offset = layout
    low = offset + sum((n - 1) * st for n, st in zip(shape, stride) if st < 0)
    high = offset + sum((n - 1) * st for n, st in zip(shape, stride) if st > 0) + 1
    return ptr + es * low, ptr + es * high


def _layout_addresses(layout):
    """The first byte of each element of ``layout`` ((storage address, element size, shape, strides, offset in
    elements)), as an int64 array of its shape."""
    import numpy as np

    ptr, es, shape, stride, offset = layout
    index = np.full((), offset, dtype=np.int64)
    for dim, (n, s) in enumerate(zip(shape, stride)):
        index = index + (np.arange(n, dtype=np.int64) * s).reshape((n,) + (1,) * (len(shape) - dim - 1))
    return ptr + es * np.broadcast_to(index, tuple(shape))


def _span(t):
    """``(first byte, end, element size, elements)`` of tensor ``t``'s memory (None: not a tensor with
    elements)."""
    if not hasattr(t, "data_ptr") or not hasattr(t, "element_size") or not hasattr(t, "numel") or t.numel() == 0:
        return None
    es = t.element_size()
    last = sum((s - 1) * st for s, st in zip(t.shape, t.stride()))
    return (t.data_ptr(), t.data_ptr() + (last + 1) * es, es, t.numel())


def _element_size(ptrs, default: int = 1) -> int:
    """The bytes of one element that ``ptrs`` (a block of pointers) points to (``default`` where this Triton
    does not say)."""
    try:
        return max(1, ptrs.get_element_ty().primitive_bitwidth // 8)
    except AttributeError:  # pragma: no cover - another Triton layout
        return default


def _worth(launch, name, lanes: int, pointer_bytes: int | None) -> int:
    """The elements that ``lanes`` lanes of ``pointer_bytes`` bytes each read or write in argument ``name``: the
    bytes, in elements of the grader's tensor they are compared against (rounded up), so that a row read through
    a pointer to int64 (one lane: two fp32 or four fp16 values) counts as the elements it reads, not as half or
    a quarter of them. One of the grader's tensors (or a view of one, see :func:`_unit`) counts in its own
    elements; memory of the reader's own (a scratch buffer, a workspace) in elements of the grader's first
    tensor, x, by bytes: fp32 values kept in a float64 buffer through a pointer cast, or packed two to an int64
    lane, count as the elements of x they are, not half as many (round 15's 05, 06; round 16's 24, 25). A
    pointer of the unit's own type counts its lanes, and so does a 4-byte lane where x is narrower: an fp32
    accumulator of dQ, or ``x.float()``, holds one value of x a lane (round 16's h01, h08-h10, h12), and so does a
    pointer of the buffer's own type where no kernel stored packed values there (``x.double()``, read as float64;
    an int64 buffer a kernel filled with pairs counts by bytes, :func:`_packed`)."""
    unit = _unit(launch, name)
    if not pointer_bytes or not unit or unit == pointer_bytes:
        return lanes
    if pointer_bytes == 4 and unit < 4 and name not in launch._exact and name not in launch._in_grader \
            and not _packed(launch, name):
        return lanes  # memory of the reader's own only: int32 lanes over fp16 x still read two elements each
    record = next((a for a in launch.args if a[0] == name), None)
    if record is not None and record[3] == pointer_bytes and not _packed(launch, name):
        return lanes  # a buffer's own type, which no kernel packed: ``x.double()`` holds one value of x a lane
    return -(-lanes * pointer_bytes // unit)


def _packed(launch, name) -> bool:
    """Whether argument ``name`` lies in memory that a kernel of the call stored values into that were not values
    computed in fp32 (:attr:`Trace._packed`): int32 (two fp16 values packed in a lane, round 17's 12), fp16 (read
    back two to an int32 lane), or bits reinterpreted (``.to(tl.float32, bitcast=True)``). Its 4-byte lanes count
    by bytes (:func:`_worth`)."""
    spans = getattr(_TRACE, "_packed", None)
    if not spans:
        return False
    record = next((a for a in launch.args if a[0] == name), None)
    return record is not None and any(start < record[2] and record[1] < end for start, end in spans)


def _unit(launch, name) -> int | None:
    """The bytes of one element that loads and stores of argument ``name`` count in (see :func:`_worth`): its
    own element size where it is one of the grader's tensors or lies in one's memory (a view, a slice), else
    the element size of the grader's first floating-point tensor of the call (x, a, q: ``Launch._grader_unit``,
    set with the launch's arguments), else its own."""
    record = next((a for a in launch.args if a[0] == name), None)
    if record is None:
        return None
    if name in launch._exact or name in launch._in_grader or not launch._grader_unit:
        return record[3]
    return launch._grader_unit


def _install():
    """Patch the interpreter; returns the list of (owner, name, original) to restore."""
    import numpy as np
    from triton.runtime import interpreter as interp

    saved = []

    def patch(owner, name, make):
        original = getattr(owner, name, None)
        if original is None:  # another Triton's interpreter: leave that count out
            return
        saved.append((owner, name, original))
        setattr(owner, name, make(original))

    state = {"launch": None, "program": 0, "grid": (1, 1, 1)}

    def ranked(launch, width):
        """The launch's arguments in the order a lane is booked to them where several hold its address: one of
        the grader's tensors itself first, then one whose element is the lane's own type (``width`` bytes), then
        the launch's order. A view of x in another dtype (``x.view(torch.int64)``) passed before x, or a slice of
        x, takes none of x's lanes."""
        exact = getattr(launch, "_exact", ())
        return sorted(launch.args, key=lambda a: (a[0] not in exact, a[3] != width))

    def name_of(launch, addresses, width=0):
        """The argument most of these addresses fall in (the first active lane's)."""
        if addresses.size == 0:
            return None
        a = int(addresses.reshape(-1)[0])
        for name, start, end, _, _ in ranked(launch, width):
            if start <= a < end:
                return name
        return "?"

    def split(launch, addresses, active, width=0):
        """The lanes of one load or store by the argument each address falls in: ``[(name, argument's first byte,
        lanes)]``, ``lanes`` a boolean array over ``addresses`` (None: all of them), the argument of the first
        active lane first (it keeps the lanes masked off). A load whose lanes point into two tensors is counted
        as a load of each (a pass over x is not hidden by pointing lane 0 at a row's statistics). Where two
        arguments hold an address, the lane goes to the one :func:`ranked` puts first (``width``: the bytes of
        the pointer's element)."""
        picked = addresses[active]
        name = name_of(launch, picked, width) or name_of(launch, addresses, width)
        start, end = next(((a[1], a[2]) for a in launch.args if a[0] == name), (None, None))
        if not picked.size or (start is not None and int(picked.min()) >= start and int(picked.max()) < end):
            return [(name, start, None)]
        # some active lanes lie outside the first one's argument: each goes to the first argument holding it
        # (the first active lane's argument first, then in the order of ``ranked``), "?" where none does; the
        # lanes masked off stay with the first active lane's argument (its block visited)
        left = active.copy()
        out = []
        order = [a for a in launch.args if a[0] == name][:1] + [a for a in ranked(launch, width) if a[0] != name]
        for arg_name, a_start, a_end, _, _ in order:
            inside = left & (addresses >= a_start) & (addresses < a_end)
            if arg_name == name:
                out.append((arg_name, a_start, inside | ~active))
            elif inside.any():
                out.append((arg_name, a_start, inside))
            left &= ~inside
        if left.any():
            out.append(("?", None, left | ~active if name == "?" else left))
        return out

    def lanes(ptrs, mask):
        addresses = np.asarray(ptrs.data).astype(np.uint64)
        if mask is None:
            active = np.ones(addresses.shape, dtype=bool)
        else:
            active = np.broadcast_to(np.asarray(mask.data, dtype=bool), addresses.shape)
        return addresses, active

    def make_call(original):
        def call(self, *args, **kwargs):
            trace = _TRACE
            if trace is None:
                return original(self, *args, **kwargs)
            outer = state["launch"]
            launch = Launch(getattr(self.fn, "__name__", "?"))
            state["launch"] = launch
            try:
                return original(self, *args, **kwargs)
            finally:
                state["launch"] = outer
                launch.grid = state["grid"]
                launch.race = _find_race(launch, state["grid"])
                _split_at_draws(launch, _tickets(launch))
                _link(trace, launch)
                # an atomic exchange writes a value as a store does (round 24: a store left in a loop as tl.atomic_xchg)
                launch.stored_again, launch.stored_set = _repeated_stores(launch._stores + launch._exchanges +
                                                                          launch._bitwise)
                launch._bitwise = []
                launch.added_again = _repeated_stores(launch._value_adds)[0]
                launch._value_adds = []
                launch.writes = _distinct_writes(launch._stores + launch._exchanges + launch._adds)
                if launch._still_lanes:
                    launch.value_writes = _distinct_writes(launch._value_stores + launch._value_atomics)
                launch._value_stores, launch._value_atomics = [], []
                _own_atomic_marks(launch)
                launch._stores, launch._loads = [], []
                launch._store_where, launch._load_where = [], []
                launch._lineage_loads, launch._lineage_writes, launch._stored_sources = [], [], {}
                launch._stored_loads = {}
                launch._returned, launch._used_returns = [], set()
                launch._constant_adds, launch._who_writes, launch._conditions = {}, {}, []
                launch._atomic_order, launch._exchange_info, launch._draw_marks = [], [], []
                launch._write_log, launch._pid_writes, launch._pid_conditions = [], {}, []
                launch._pid_nodes, launch._pid_operands, launch._pid_values = {}, [], []
                launch.atomic_written = {n: int(np.unique(np.concatenate(a)).size)
                                         for n, a in launch._atomic_addresses.items()}
                launch.copy_only = bool(launch.copied) and launch.copied == sum(launch.stored.values()) and \
                    not launch.atomics and not launch.dot_shapes
                launch._atomic_addresses = {}
                trace.launches.append(launch)

        return call

    def make_init_args(original):
        def init_args(self, args_dev, kwargs):
            args_hst, kwargs_hst = original(self, args_dev, kwargs)
            launch = state["launch"]
            if _TRACE is not None and launch is not None:
                names = list(getattr(self, "arg_names", []))
                pairs = [(names[i] if i < len(names) else f"argument {i}", t) for i, t in enumerate(args_hst)]
                pairs += list(kwargs_hst.items())
                owners = [_span(o) for o in getattr(_TRACE, "owners", ()) if _span(o) is not None]
                _TRACE._owner_spans = owners  # (read while the kernel runs, where data_ptr is the reader's)
                for name, t in pairs:
                    t = getattr(t, "base", t)
                    if not hasattr(t, "data_ptr") or not hasattr(t, "element_size") or t.numel() == 0:
                        continue
                    record = (name,) + _span(t)
                    # a view of one of the grader's tensors in another dtype (k.view(torch.int16)) is that
                    # tensor: its lanes are the tensor's, counted in the tensor's elements
                    owner = next((o for o in owners if o[0] < record[2] and record[1] < o[1]
                                  and o[2] != record[3] and not any(p[0] <= record[1] < p[1] and p[2] == record[3]
                                                                    for p in owners)), None)
                    if owner is not None:
                        record = (name,) + owner
                    else:
                        # a buffer that torch filled with a copy in another dtype (``ws.view(k.dtype).copy_(k)``
                        # into float64) holds elements of that dtype: its lanes are counted in them
                        held = _TRACE.torch_element_size(t) if hasattr(_TRACE, "torch_element_size") else None
                        if held and held != record[3]:
                            record = (name, record[1], record[2], held, (record[2] - record[1]) // held)
                    if any(o == record[1:] for o in owners):
                        launch._exact.add(name)
                    if any(o[0] <= record[1] < o[1] for o in owners):
                        launch._in_grader.add(name)
                    launch.args.append(record)
                launch._grader_unit = next((o.element_size() for o in getattr(_TRACE, "owners", ())
                                            if _span(o) is not None and o.is_floating_point()), 0)
                args_hst, kwargs_hst = constant_strides(self, names, args_hst, kwargs_hst)
            return args_hst, kwargs_hst

        return init_args

    def constant_strides(executor, names, args_hst, kwargs_hst):
        """The launch's tl.constexpr sizes and strides (not block shapes) handed to the kernel as
        :class:`_Constant`, so that the constants made from them carry the run-time argument's taint."""
        from gpuperf.grading.frontend import stride_constexprs

        try:
            strides = stride_constexprs(executor.fn, args_hst, kwargs_hst)
        except Exception:  # pragma: no cover - another Triton's layout: nothing marked
            return args_hst, kwargs_hst
        if not strides:
            return args_hst, kwargs_hst
        args_hst, kwargs_hst = list(args_hst), dict(kwargs_hst)
        for name, value in strides.items():
            if name in kwargs_hst and type(kwargs_hst[name]) is int:
                kwargs_hst[name] = _Constant(value)
            elif name in names and names.index(name) < len(args_hst) and \
                    type(args_hst[names.index(name)]) is int:
                args_hst[names.index(name)] = _Constant(value)
        return args_hst, kwargs_hst

    def make_constant(original):
        def constant(self, value):
            res = original(self, value)
            if _TRACE is not None and type(value) is _Constant:
                res._gpuperf_arg = True
            return res

        return constant

    def make_grid_dim(original):
        def grid_dim(self, nx, ny, nz):
            state["grid"] = (nx, ny, nz)
            return original(self, nx, ny, nz)

        return grid_dim

    def make_grid_idx(original):
        def grid_idx(self, x, y, z):
            launch = state["launch"]
            if _TRACE is not None and launch is not None:
                nx, ny, _ = state["grid"]
                state["program"] = x + nx * (y + ny * z)
                launch.programs += 1
            return original(self, x, y, z)

        return grid_idx

    def note_offsets(launch, ptrs):
        if _attr(ptrs, "_gpuperf_narrow", False):
            launch.narrow_pid_offsets += 1
        wraps, rows = (getattr(ptrs, f, False) for f in ("_gpuperf_wraps", "_gpuperf_rows"))
        if wraps or rows:
            launch.wrapping_offsets += 1
            launch.wrapping_kernel = launch.wrapping_kernel or launch.kernel
        if wraps or (rows and not _attr(ptrs, "_gpuperf_wide", False)):
            launch.wrapping_heads += 1
            launch.wrapping_heads_kernel = launch.wrapping_heads_kernel or launch.kernel

    def make_load(original):
        def load(self, ptrs, mask, *rest, **kw):  # (a tensor descriptor's load passes keywords)
            launch = state["launch"]
            if _TRACE is not None and launch is not None:
                addresses, active = lanes(ptrs, mask)
                note_offsets(launch, ptrs)
                shape = tuple(int(s) for s in addresses.shape)
                sources = _sources(ptrs) | _sources(mask)  # a gather through addresses computed from a load
                program = state["program"]
                first_visit = len(launch.visits)
                carried = frozenset()  # the loads of what this program stored at these addresses
                width = _element_size(ptrs, 0)  # bytes a lane reads: counted in elements of the tensor
                tile_of = None  # the argument of the first active lane: the tile's (for dot_tiles)
                for name, start, part in split(launch, addresses, active, width):
                    tile_of = tile_of or name
                    seen = addresses if part is None else addresses[part]  # (masked off or not)
                    picked = addresses[active] if part is None else addresses[part & active]
                    worth = _worth(launch, name, int(picked.size), width)
                    launch.loaded[name] = launch.loaded.get(name, 0) + worth
                    launch.widest_load[name] = max(launch.widest_load.get(name, 0),
                                                   _worth(launch, name, int(seen.size), width))
                    if worth != picked.size and width != _element_step(launch, name):  # a pointer of another type
                        launch.recast.setdefault(name, str(ptrs.get_element_ty()))
                    if seen.size:  # the block visited, whether or not its lanes are masked off
                        _note_visit(launch, name, program, seen, picked, width)
                    shapes = launch.load_shapes.setdefault(name, {})
                    shapes[shape] = shapes.get(shape, 0) + 1
                    if start is not None:
                        sources = sources | {start}
                    if picked.size:
                        unique = np.unique(picked)
                        launch._loads.append((unique, program))
                        launch._load_where.append((_who(ptrs) | _who(mask)) - _WHO_PID)
                        launch._lineage_loads.append((unique, program, start, width))
                        counts = launch.per_program.setdefault(name, {})
                        counts[program] = counts.get(program, 0) + worth
                        launch.spans.append((name, program, int(picked.min()), int(picked.max())))
                        launch.span_worth.append(worth)
                        runs = _address_runs(unique, _element_step(launch, name, width))
                        if runs is not None:  # lanes in several runs: rows wrapped or clamped, or a gather
                            launch.span_runs[len(launch.spans) - 1] = runs
                        # what this launch stored there before: the stored value's sources travel on
                        sources = sources | _stored_sources(launch, unique)
                        carried = carried | _stored_loads(launch, program, unique)
                res = original(self, ptrs, mask, *rest, **kw)
                if tile_of is not None and _has_data(res):  # the whole block, masked lanes too
                    res._gpuperf_tile = (tile_of, int(res.data.size) * int(res.data.itemsize),
                                         tuple(int(n) for n in res.data.shape), int(res.data.itemsize))
                if sources:
                    res._gpuperf_src = sources | _sources(res)
                if len(launch.visits) > first_visit or carried:  # the visits this load made, and those of
                    # what the program stored there (a round trip through its own scratch): what its value carries
                    res._gpuperf_loads = frozenset(range(first_visit, len(launch.visits))) | carried
                if _has_data(res):  # where each lane came from (a copy stored as loaded is a copy)
                    res._gpuperf_lanes_from = ((addresses, active),)
                    who = _who(ptrs) | _who(mask)
                    if who:  # what was loaded depends on what chose its address
                        res._gpuperf_who = who | _who(res)
                        via = _pid_atoms(ptrs) | _pid_atoms(mask)
                        if via:
                            res._gpuperf_pvia = via | _attr(res, "_gpuperf_pvia", frozenset())
                return res
            return original(self, ptrs, mask, *rest, **kw)

        return load

    def make_store(original):
        def store(self, ptrs, value, mask, *rest, **kw):
            launch = state["launch"]
            if _TRACE is not None and launch is not None:
                addresses, active = lanes(ptrs, mask)
                picked = addresses[active]
                note_offsets(launch, ptrs)
                width = _element_size(ptrs, 0)
                # values other than fp32 stored in the reader's own memory (int32 lanes: two fp16 values packed
                # in each; fp16 pairs read back through an int32 pointer; bits reinterpreted): the buffer's
                # 4-byte lanes count by bytes (:func:`_packed`)
                packs = picked.size and (np.asarray(value.data).dtype != np.float32
                                         or _attr(value, "_gpuperf_bits", False))
                for name, _, part in split(launch, addresses, active, width):
                    count = picked.size if part is None else int(np.count_nonzero(part & active))
                    if packs and count and name not in launch._exact and name not in launch._in_grader:
                        record = next((a for a in launch.args if a[0] == name), None)
                        if record is not None and (record[1], record[2]) not in _TRACE._packed:
                            _TRACE._packed.append((record[1], record[2]))
                    worth = _worth(launch, name, int(count), width)
                    launch.stored[name] = launch.stored.get(name, 0) + worth
                    if count:
                        made_from = launch.stored_from.setdefault(name, {})
                        kinds = len(_sources(value))
                        made_from[kinds] = made_from.get(kinds, 0) + worth
                    if count:
                        mine = picked if part is None else addresses[part & active]
                        launch.store_marks.append((name, state["program"], len(launch.visits), int(mine.min()),
                                                   int(mine.max())))
                shape = tuple(int(s) for s in addresses.shape)
                launch.store_shapes[shape] = launch.store_shapes.get(shape, 0) + 1
                if sum(1 for s in addresses.shape if s > 1) >= 2:
                    launch.stored_2d += int(picked.size)
                    if picked.size:
                        launch.blocks_2d.append(np.unique(picked))
                if picked.size:
                    unique = np.unique(picked)
                    launch._stores.append((unique, state["program"]))
                    launch._store_where.append((_who(ptrs) | _who(mask)) - _WHO_PID)
                    launch._used_returns.update(_returned(value))  # an atomic's returned value, written
                    who = _who(value) | _who(ptrs) | _who(mask)
                    launch._write_log.append((state["program"], who))
                    if who - _WHO_PID:  # a draw's value reached what was written, or where
                        launch._who_writes.setdefault(who, state["program"])
                        if _PROGRAM_ID in who:
                            atoms = _pid_atoms(value) | _pid_atoms(ptrs) | _pid_atoms(mask)
                            launch._pid_writes.setdefault((who, atoms), state["program"])
                    _note_still_store(launch, addresses, active, value, state["program"], unique)
                    # what the value was computed from (its mask and address too: a value picked by a
                    # comparison with a loaded one depends on it)
                    sources = _sources(value) | _sources(mask) | _sources(ptrs)
                    launch._lineage_writes.append((_pieces(unique, width), state["program"], sources,
                                                    min(width or _PIECE, _PIECE)))
                    _note_stored(launch, unique, sources)
                    _note_stored_loads(launch, state["program"], unique, _loads(value))
                    lanes_from = _attr(value, "_gpuperf_lanes_from", None)
                    union = np.zeros(addresses.shape, dtype=bool)
                    if lanes_from is not None and lanes_from[0][0].shape == addresses.shape:
                        for origin, loaded in lanes_from:  # each loaded element a stored lane was computed from
                            copied = active & loaded  # a masked-off source lane holds `other`, no copy
                            if copied.any():
                                launch.copies.append((addresses[copied], origin[copied]))
                                union |= copied
                        launch.copied += int(np.count_nonzero(union))
                    for origin, loaded in _derived_from(value) or ():  # computed from it with other loads
                        if origin.shape != addresses.shape:
                            continue
                        derived = active & loaded & ~union
                        if derived.any():
                            launch.derived.append((addresses[derived], origin[derived]))
            return original(self, ptrs, value, mask, *rest, **kw)

        return store

    def make_atomic(original, exchange_always: bool):
        def atomic(self, *args, **kwargs):
            launch = state["launch"]
            if _TRACE is not None and launch is not None:
                carried = there = returned = mine_who = frozenset()
                launch.atomics += 1
                try:
                    if exchange_always:  # create_atomic_cas(ptr, cmp, val, ...)
                        ptrs, mask, exchange = args[0], None, True
                    else:  # create_atomic_rmw(op, ptr, val, mask, ...)
                        op, ptrs, mask = args[0], args[1], args[3] if len(args) > 3 else None
                        exchange = "XCHG" in str(op).upper()
                    addresses, active = lanes(ptrs, mask)
                    picked = addresses[active]
                    note_offsets(launch, ptrs)
                    # an atomic reads what it updates: its lanes count as loads (passes, blocks visited), each
                    # booked to the tensor it falls in
                    program = state["program"]
                    shape = tuple(int(s) for s in addresses.shape)
                    width = _element_size(ptrs, 0)
                    at = len(launch.visits)
                    for name, _, part in split(launch, addresses, active, width):
                        seen = addresses if part is None else addresses[part]
                        mine = picked if part is None else addresses[part & active]
                        if mine.size:  # an atomic writes what it updates (an output added to: its rows)
                            launch._atomic_marks.append((len(launch.store_marks), np.unique(mine)))
                            launch.store_marks.append((name, program, at, int(mine.min()), int(mine.max())))
                        worth = _worth(launch, name, int(mine.size), width)
                        launch.loaded[name] = launch.loaded.get(name, 0) + worth
                        launch.atomic_args.add(name)
                        if seen.size:
                            _note_visit(launch, name, program, seen, mine, width)
                        shapes = launch.load_shapes.setdefault(name, {})
                        shapes[shape] = shapes.get(shape, 0) + 1
                        if mine.size:
                            launch._atomic_addresses.setdefault(name, []).append(np.unique(mine))
                            counts = launch.per_program.setdefault(name, {})
                            counts[program] = counts.get(program, 0) + worth
                            launch.spans.append((name, program, int(mine.min()), int(mine.max())))
                            launch.span_worth.append(worth)
                            runs = _address_runs(mine, _element_step(launch, name, width))
                            if runs is not None:
                                launch.span_runs[len(launch.spans) - 1] = runs
                    if picked.size:
                        record = (np.unique(picked), program)
                        (launch._exchanges if exchange else launch._adds).append(record)
                        if not exchange_always and any(word in str(op).upper().rsplit(".", 1)[-1]
                                                       for word in ("AND", "OR", "XOR", "MIN", "MAX")):
                            launch._bitwise.append(record)
                        # the values it writes (not its address or mask): an earlier atomic's returned value
                        # among them is used; its own returned value is tagged with its record
                        values = args[1:3] if exchange_always else args[2:3]
                        launch._used_returns.update(*(_returned(a) for a in values))
                        index = len(launch._returned)
                        returned = frozenset((index,))
                        launch._returned.append(record)
                        launch._order[0] += 1
                        launch._atomic_order.append(launch._order[0])
                        who = _who(ptrs) | _who(mask) | frozenset().union(*(_who(a) for a in values))
                        constant = _constant_value(values[-1], active)
                        if not exchange and constant is None and "ADD" in str(op).upper().rsplit(".", 1)[-1]:
                            launch._value_adds.append(record)
                        if exchange:
                            launch._exchange_info.append((index, who, constant is not None))
                        elif constant is not None and "ADD" in str(op).upper() and constant[1] != 0:
                            launch._constant_adds[index] = constant
                            launch._draw_marks.append((index, program, {a: len(getattr(launch, a))
                                                                        for a, _ in _SEGMENTED}))
                        if not (constant is not None and not exchange):  # a draw is no write of work
                            launch._write_log.append((program, who))
                        if who - _WHO_PID:
                            launch._who_writes.setdefault(who, program)
                            if _PROGRAM_ID in who:
                                atoms = _pid_atoms(ptrs) | _pid_atoms(mask) | \
                                    frozenset().union(*(_pid_atoms(a) for a in values))
                                launch._pid_writes.setdefault((who, atoms), program)
                        # its returned value: a counter's draw is its own, whichever counter the program id
                        # chose (a counter per tile); a write that also depends on the program id is told by that
                        mine_who = returned
                        operands = frozenset().union(*(_sources(a) for a in args if _has_data(a)))
                        launch._lineage_writes.append((_pieces(record[0], width), program, operands,
                                                        min(width or _PIECE, _PIECE)))
                        # the value it returns (what was there) carries what this launch stored there before
                        carried = operands | _stored_sources(launch, record[0]) | \
                            {start for _, start, _ in split(launch, addresses, active, width) if start is not None}
                        _note_stored(launch, record[0], operands)
                        # what was there and what it adds: its returned value carries the first, memory both
                        there = _stored_loads(launch, program, record[0])
                        added = frozenset().union(*(_loads(a) for a in args if _has_data(a)))
                        _note_stored_loads(launch, program, record[0], there | added)
                except (AttributeError, IndexError, TypeError):  # pragma: no cover - another layout
                    pass
                res = original(self, *args, **kwargs)
                _note_still_lanes(launch, args, res, state["program"], lanes, exchange_always)
                if carried and _has_data(res):
                    res._gpuperf_src = carried | _sources(res)
                if there and _has_data(res):
                    res._gpuperf_loads = there | _loads(res)
                if returned and _has_data(res):
                    res._gpuperf_ret = returned | _returned(res)
                    res._gpuperf_who = mine_who | _who(res)
                return res
            return original(self, *args, **kwargs)

        return atomic

    def make_dot(original):
        def dot(self, *args, **kwargs):
            launch = state["launch"]
            if _TRACE is not None and launch is not None:
                try:
                    a, b = (np.shape(t.data) for t in args[:2])
                    shape = (int(a[-2]), int(a[-1]), int(b[-1]))
                    # a batched (3-D) tl.dot is one tile product per batch entry (two heads a program: round
                    # 29's review), each counted as a 2-D one
                    batch = int(np.prod(a[:-2])) if len(a) > 2 else 1
                    launch.dot_shapes[shape] = launch.dot_shapes.get(shape, 0) + batch
                    launch.dot_marks.append((state["program"], len(launch.spans)))
                    launch.dots_run[state["program"]] = launch.dots_run.get(state["program"], 0) + 1
                    key = shape + (_sources(args[0]), _sources(args[1]))
                    launch.dot_sources[key] = launch.dot_sources.get(key, 0) + batch
                    left, right = (np.asarray(getattr(t, "data")) != 0 for t in args[:2])
                    nonzero = int((left.sum(axis=-2) * right.sum(axis=-1)).sum())
                    launch.dot_nonzero[key] = launch.dot_nonzero.get(key, 0) + nonzero
                    first, second = _loads(args[0]), _loads(args[1])
                    launch.dot_loads.append((state["program"], first | second))
                    launch.dot_operand_loads.append((state["program"], first, second))
                    for operand, loads in ((args[0], first), (args[1], second)):
                        data = getattr(operand, "data", None)
                        if data is not None and np.size(data) and not np.any(data):
                            launch.dot_zero_operands.append((state["program"], loads))
                            break
                    tiles = launch.dot_tiles.setdefault(state["program"], {})
                    for operand in args[:2]:
                        tile = _attr(operand, "_gpuperf_tile", None)
                        if tile is not None and tile[1] > tiles.get(tile[0], (0,))[0]:
                            tiles[tile[0]] = tile[1:]
                except (AttributeError, IndexError, TypeError):  # pragma: no cover - another layout
                    pass
            res = original(self, *args, **kwargs)
            if _TRACE is not None:
                _carry_sources(res, args[:3])
            found = _dot_site()
            if found is not None:
                site, shown = found
                _PERTURB["seen"].setdefault(site, shown)
                target = _PERTURB["site"]
                # "late" (round 33): every call of a site but its first in each program (a dot run each block
                # whose product is used for the first block only); "first": the first call of each site in each
                # program only (a dot used for a later block only)
                later = 0
                if target in ("late", "first"):  # (counted only in those reruns)
                    calls = _PERTURB.setdefault("calls", {})
                    call = (id(launch), state.get("program"), site)
                    later = calls.get(call, 0)
                    calls[call] = later + 1
                every = target in ("every", "zero", "small", "double") or (target == "late" and later > 0) or \
                    (target == "first" and later == 0)
                if (target == site or every) and getattr(res, "data", None) is not None:
                    # the products alone, each changed by noise of its own size (round 29: not the accumulator
                    # passed in, and a product that is 0 stays 0, so a decoy of zeros matters nowhere)
                    data = res.data
                    given = getattr(args[2] if len(args) > 2 else kwargs.get("d"), "data", None)
                    made = data.astype(np.float64) - (0.0 if given is None else np.asarray(given, np.float64))
                    # "every" site at once: one pattern of noise per shape, so that two dots whose products
                    # cancel (d1 - d2 of the same tiles) cancel again (round 29); "zero": every product made 0
                    # (round 30: a cancelling pair of any shapes, a @ b - (b^T @ a^T)^T, cancels again);
                    # "small": every product changed by 2^-22 of itself (round 30: a guard that uses a dot only
                    # where it disagrees with a lazy sum leaves the output unchanged, bit for bit)
                    seed = hash(tuple(np.shape(data))) & 0xFFFFFFFF if every else len(_PERTURB["seen"])
                    noise = np.random.default_rng(seed).standard_normal(np.shape(data))
                    if target == "zero":
                        noise = -np.ones(np.shape(data))
                    elif target == "double":  # round 34: every product doubled, C must double exactly
                        noise = np.ones(np.shape(data))
                    elif target == "small":
                        noise *= 2.0 ** -22
                    res.data = (data + made * noise).astype(data.dtype)
            return res

        return dot

    # the program id's taint: a value computed from tl.program_id carries _gpuperf_pid; a product of one in
    # fewer than 64 bits carries _gpuperf_narrow, through casts, sums, splats and broadcasts, to a pointer
    # a size or stride given at run time carries _gpuperf_arg; a 32-bit product of a program id's value and
    # one carries _gpuperf_wraps, through casts, sums, splats and broadcasts, to a pointer, or _gpuperf_rows
    # where the program id's value has tl.arange lanes in it (_gpuperf_lanes: a block's rows); a 64-bit
    # product of a program id's value and a size or stride carries _gpuperf_wide (a head's offset), and a
    # 64-bit product of a wrapping value is an index scaled to an offset: it wraps no more (as
    # gpuperf.grading.frontend.wrapping_offsets reads the TTIR)
    flags = ("_gpuperf_pid", "_gpuperf_narrow", "_gpuperf_arg", "_gpuperf_wraps", "_gpuperf_lanes",
             "_gpuperf_rows", "_gpuperf_wide")

    def tainted(*handles):
        return tuple(any(getattr(h, f, False) for h in handles) for f in flags)

    def mark(res, *values):
        for f, value in zip(flags, values):
            if value:
                setattr(res, f, True)
        return res

    def make_argument(original):
        def implicit_cvt(arg):
            res = original(arg)
            if _TRACE is not None and isinstance(arg, int) and not isinstance(arg, bool) and arg != 1:
                handle = getattr(res, "handle", None)
                if handle is not None:
                    handle._gpuperf_arg = True
                    handle._gpuperf_given = arg  # the argument itself (not carried): a slice start's factor
            return res

        return implicit_cvt

    def make_range(original):
        def make_range_(self, *args):
            res = original(self, *args)
            if _TRACE is not None:
                res._gpuperf_lanes = True
            return res

        return make_range_

    def make_pid(original):
        def program_id(self, *args):
            res = original(self, *args)
            if _TRACE is not None:
                res._gpuperf_pid = True
                res._gpuperf_who = _WHO_PID
                res._gpuperf_axis = args[0] if args and isinstance(args[0], int) else None  # not carried
                if state["launch"] is not None:
                    _note_pid_node(state["launch"], state["program"], res, ("program_id",) + args, ())
            return res

        return program_id

    def slice_start(lhs, rhs) -> bool:
        """``lhs * rhs`` is a program id times an integer argument, each as given, whose product stays below the
        longest dimension of the grader's tensors on this launch's grid
        (:func:`gpuperf.grading.frontend.slice_starts`, the same exemption as the TTIR's)."""
        from gpuperf.grading.frontend import slice_starts

        for pid, arg in ((lhs, rhs), (rhs, lhs)):
            axis, value = _attr(pid, "_gpuperf_axis", None), _attr(arg, "_gpuperf_given", None)
            if axis in (0, 1, 2) and value is not None:
                shapes = [tuple(t.shape) for t in getattr(_TRACE, "owners", ()) if hasattr(t, "shape")]
                if ("xyz"[axis], "given") in slice_starts(state["grid"], {"given": value}, shapes):
                    return True
        return False

    def make_binary(original):
        def binary(self, lhs, rhs, op):
            res = original(self, lhs, rhs, op)
            if _TRACE is not None:
                pid, narrow, arg, wraps, lanes, rows, wide = tainted(lhs, rhs)
                kind = np.asarray(res.data).dtype
                if op in (np.fmod, np.remainder, np.floor_divide) and kind.kind in "iu":
                    # a remainder (or quotient) wraps only as its dividend does: a tile index that passed a
                    # 32-bit product is a divisor bounded by what it divides (round 24's h10: a group's rows,
                    # min(tiles_m - first_m, GROUP_M), dividing the program id)
                    wraps, rows = tainted(lhs)[3], tainted(lhs)[5]
                if op in (np.multiply, np.left_shift) and kind.kind in "iu":
                    lp, rp = (_attr(h, "_gpuperf_pid", False) for h in (lhs, rhs))
                    la, ra = (_attr(h, "_gpuperf_arg", False) for h in (lhs, rhs))
                    factors = [h for h, hit in ((lhs, lp and ra), (rhs, rp and la)) if hit]
                    if kind.itemsize < 8:
                        narrow = narrow or pid
                        if factors and op is np.multiply and slice_start(lhs, rhs):
                            pass  # inside one dimension: no wrap, still the program id's value
                        elif any(not _attr(h, "_gpuperf_lanes", False) for h in factors):
                            wraps = True
                        elif factors:
                            rows = True
                    elif op is np.multiply:  # 64 bits: an index scaled to an offset, or a head's offset
                        wraps = rows = False
                        wide = wide or bool(factors)
                mark(res, pid, narrow, arg, wraps, lanes, rows, wide)
            return res

        return binary

    def make_unary_like(original):
        def unary(self, *args, **kwargs):
            res = original(self, *args, **kwargs)
            if _TRACE is not None:
                handles = [a for a in args if _has_data(a)]
                mark(res, *tainted(*handles))
            return res

        return unary

    def make_carry(original, elementwise=False, derived=False, name=""):
        """The result of an operation carries the sources of its operands (see :meth:`Trace.products`); an
        elementwise one (``elementwise``) of one loaded value and nothing else loaded keeps where each lane came
        from (:attr:`Launch.copies`); ``derived``: an elementwise operation whose lanes are no copy of anything (a
        library function, the high half of a product) keeps where its lanes were derived from
        (:func:`_carry_derived`)."""

        def carry(self, *args, **kwargs):
            res = original(self, *args, **kwargs)
            if _TRACE is not None:
                operands = list(args) + list(kwargs.values())
                _carry_sources(res, operands)
                if state["launch"] is not None and any(_PROGRAM_ID in _who(a) for a in operands):
                    _pid_operation(state["launch"], state["program"], res, name, operands)
                if name in _PRODUCT_BUILDERS and state["launch"] is not None and _address_outer(operands):
                    state["launch"].address_outer += 1
                if elementwise:
                    _carry_lanes(res, operands)
                elif derived:
                    _carry_derived(res, [a for a in operands if _has_data(a)])
                if elementwise or derived:
                    _carry_tile(res, operands)
            return res

        return carry

    def make_reduce(original):
        def apply(self, input):
            res = original(self, input)
            if _TRACE is not None:
                handles = [getattr(t, "handle", None) for t in (input if isinstance(input, tuple) else (input,))]
                outs = res if isinstance(res, tuple) else (res,)
                _carry_sources(tuple(getattr(t, "handle", None) for t in outs), handles)
                # round 33 (16): a tile passed through a reduction or a scan (tl.sum over a join with zeros)
                # is still the tile loaded: its result keeps the tag, at its own size in the loaded elements
                tile = next((t for t in (_attr(h, "_gpuperf_tile", None) for h in handles if _has_data(h))
                             if t is not None), None)
                for out in outs:
                    handle = getattr(out, "handle", None)
                    if tile is not None and _has_data(handle) and np.ndim(handle.data) >= 2:
                        try:
                            handle._gpuperf_tile = (tile[0], int(np.size(handle.data)) * tile[3],
                                                    tuple(int(n) for n in np.shape(handle.data)), tile[3])
                        except AttributeError:  # pragma: no cover - a handle without a __dict__
                            pass
            return res

        return apply

    builder = interp.InterpreterBuilder
    skip = ("store", "print", "assert", "barrier", "program_id", "num_programs", "make_range", "masked_load",
            "create_dot", "create_load", "atomic_cas", "atomic_rmw", "descriptor")
    for name in sorted(dir(builder)):
        if (name.startswith("create_") or name in ("binary_op", "unary_op", "ternary_op", "cast_impl")) and \
                not any(word in name for word in skip) and callable(getattr(builder, name, None)):
            lanewise = not any(word in name for word in _NOT_LANEWISE)
            derived = name in _DERIVED_ONLY
            patch(builder, name, lambda original, lanewise=lanewise, derived=derived, name=name:
                  make_carry(original, lanewise, derived, name))

    def make_move(original, name):
        """An operation that moves lanes without changing them (a transpose or permutation, a reshape or view, a
        size-1 axis, a join, a split, a concatenation): each lane of its result keeps the origin of the lane it
        came from (:func:`_move_lanes`), so ``tl.trans(tl.trans(k))`` stored is a copy as ``k`` is."""

        def move(self, *args, **kwargs):
            res = original(self, *args, **kwargs)
            if _TRACE is not None:
                _move_lanes(name, res, args, kwargs)
                _move_tile(name, res, args)
                _move_lanes(name, res, args, kwargs, _DERIVED)
            return res

        return move

    for name in _MOVES:
        patch(builder, name, lambda original, name=name: make_move(original, name))
    reduce_scan = getattr(interp, "ReduceScanOpInterface", None)
    if reduce_scan is not None:
        patch(reduce_scan, "apply", make_reduce)

    def note_pid_condition(launch, value, who):
        """Control flow decided by a value made from the program id (an ``if``, a ``while``, a loop's bounds):
        what the program does after a draw may depend on it (:func:`_ticket_race`)."""
        if _PROGRAM_ID in who:
            launch._pid_conditions.append((launch._order[0], state["program"],
                                           _pid_atoms(getattr(value, "handle", None))))

    def make_lang_tensor(original):
        """``x.T`` is a transpose the interpreter makes without the builder: it keeps x's sources too."""

        def patch_lang_tensor(tensor, scope):
            original(tensor, scope)
            transpose = getattr(tensor, "T", None)
            if isinstance(transpose, property) and transpose.fget is not None:
                def get_t(self, fget=transpose.fget):
                    res = fget(self)
                    if _TRACE is not None:
                        _carry_sources(getattr(res, "handle", None), [getattr(self, "handle", None)])
                        _move_lanes("T", getattr(res, "handle", None), (getattr(self, "handle", None),), {})
                        tile = getattr(getattr(self, "handle", None), "_gpuperf_tile", None)
                        if tile is not None and getattr(res, "handle", None) is not None:
                            res.handle._gpuperf_tile = tile
                        _move_lanes("T", getattr(res, "handle", None), (getattr(self, "handle", None),), {},
                                    _DERIVED)
                    return res

                scope.set_attr(tensor, "T", property(get_t))
            truth = getattr(tensor, "__bool__", None)
            if truth is not None:
                def tested(self, truth=truth):
                    res = truth(self)
                    launch = state["launch"]
                    if _TRACE is not None and launch is not None:
                        who = _who(getattr(self, "handle", None))
                        if who:  # an if or while on a value a draw (or the program id) decided
                            launch._order[0] += 1
                            launch._conditions.append((launch._order[0], state["program"], who, bool(res)))
                            note_pid_condition(launch, self, who)
                    return res

                scope.set_attr(tensor, "__bool__", tested)
            index = getattr(tensor, "__index__", None)
            if index is not None:
                def indexed(self, index=index):  # a loop's bounds (range(lo, hi)), a Python int made of a tensor
                    res = index(self)
                    launch = state["launch"]
                    if _TRACE is not None and launch is not None:
                        who = _who(getattr(self, "handle", None))
                        if who:  # a loop's bounds decided by a draw or the program id (truth: None)
                            launch._order[0] += 1
                            launch._conditions.append((launch._order[0], state["program"], who, None))
                            note_pid_condition(launch, self, who)
                    return res

                scope.set_attr(tensor, "__index__", indexed)

        return patch_lang_tensor

    patch(interp, "_patch_lang_tensor", make_lang_tensor)
    patch(builder, "create_get_program_id", make_pid)
    patch(builder, "create_make_range", make_range)
    patch(builder, "binary_op", make_binary)
    for name in ("cast_impl", "create_splat", "create_broadcast", "create_expand_dims", "create_addptr",
                 "create_reshape", "create_trans"):
        patch(builder, name, make_unary_like)
    patch(interp.GridExecutor, "__call__", make_call)
    patch(interp.GridExecutor, "_init_args_hst", make_init_args)
    patch(builder, "set_grid_dim", make_grid_dim)
    patch(builder, "set_grid_idx", make_grid_idx)
    patch(builder, "create_masked_load", make_load)
    patch(builder, "create_masked_store", make_store)
    patch(builder, "create_atomic_rmw", lambda original: make_atomic(original, False))
    patch(builder, "create_atomic_cas", lambda original: make_atomic(original, True))
    patch(interp, "_implicit_cvt", make_argument)
    patch(builder, "create_dot", make_dot)

    def make_bitcast(original):
        """A value's bits reinterpreted as another type of value (``.to(tl.int32, bitcast=True)``) carries
        ``_gpuperf_bits``, and so does what is computed from it (:func:`_carry_sources`, :func:`_packed`)."""

        def bitcast(self, src, dst_type, *rest, **kw):
            res = original(self, src, dst_type, *rest, **kw)
            if _TRACE is not None and _has_data(res):
                try:
                    if np.asarray(res.data).dtype != np.asarray(src.data).dtype:
                        res._gpuperf_bits = True
                except (AttributeError, TypeError):  # pragma: no cover - a handle without a __dict__
                    pass
            return res

        return bitcast

    patch(builder, "create_bitcast", make_bitcast)
    for name in ("get_int32", "get_uint32", "get_int64", "get_uint64"):
        patch(builder, name, make_constant)
    return saved


def _has_data(value) -> bool:
    """Whether ``value`` is an interpreter tensor handle (it has ``data``). A Triton value whose ``__getattr__``
    raises something other than ``AttributeError`` is not one: Triton 3.6's ``tl.tuple`` (a broadcast's shape,
    say) raises ``ValueError`` for a name it lacks, which ``hasattr`` lets through."""
    try:
        return hasattr(value, "data")
    except Exception:
        return False


def _attr(value, name: str, default=None):
    """``getattr(value, name, default)`` that gives ``default`` where the lookup raises anything (see
    :func:`_has_data`)."""
    try:
        return getattr(value, name, default)
    except Exception:
        return default


def _sources(handle) -> frozenset:
    return _attr(handle, "_gpuperf_src", frozenset())


#: builder operations that move lanes or combine them (a transpose, a broadcast, a reshape, a join, a gather,
#: pointer arithmetic): their result's lanes are not the operand's lanes, so no copy passes through them
_NOT_LANEWISE = ("addptr", "broadcast", "cat", "descriptor", "dot", "expand_dims", "gather", "histogram", "join",
                 "reshape", "split", "splat", "trans", "ptr", "inline_asm", "extern", "get_", "umulhi", "scan",
                 "reduce")


#: the interpreter's builders of a float product or quotient
_PRODUCT_BUILDERS = frozenset(("create_fmul", "create_fdiv", "create_precise_divf", "create_fma", "create_mul",
                               "create_umulhi"))


def _steady_axes(addresses) -> frozenset:
    """The axes (of length > 1) along which a tile's addresses do not change."""
    import numpy as np

    return frozenset(i for i in range(addresses.ndim) if addresses.shape[i] > 1 and
                     bool(np.all(addresses == np.take(addresses, [0], axis=i))))


def _address_outer(operands) -> bool:
    """Review 31: two operands of a product, each a tile as loaded (through lane-wise operations), whose
    addresses do not change along different axes: a column times a row broadcast in the addresses (a stride of
    0 made by ``* 0``, ``x - x``, ``x >> 8``, a division, an index table, or passed as 0)."""
    import numpy as np

    axes = []
    for a in operands:
        origins = _attr(a, "_gpuperf_lanes_from", None) if _has_data(a) else None
        if not origins or len(origins) != 1 or np.ndim(origins[0][0]) < 2:
            continue
        axes.append(_steady_axes(np.asarray(origins[0][0])))
    return any(x and y and not (x & y) for i, x in enumerate(axes) for y in axes[i + 1:])


def _carry_lanes(res, operands) -> None:
    """``res`` of an elementwise operation keeps its loaded operands' per-lane origins (see
    :attr:`Launch.copies`) where no other operand was computed from a load (constants, sizes, masks made from
    ``tl.arange`` only) and the shapes agree: each lane of ``res`` is a function of the loaded elements at its
    own lane (``x * 1.0``: one; ``k + 0 * k_other``: two, which a copy's rows show)."""
    import numpy as np

    if res is None or not _has_data(res):
        return
    handles = [a for a in operands if _has_data(a)]
    _carry_derived(res, handles)
    carrying = [a for a in handles if _attr(a, "_gpuperf_lanes_from", None) is not None]
    if not carrying:
        return
    if any(_sources(a) for a in handles if _attr(a, "_gpuperf_lanes_from", None) is None):
        _carry_equal_lanes(res, carrying)
        return
    origins: list = []
    for a in carrying:
        origins += [o for o in a._gpuperf_lanes_from if not any(o is seen for seen in origins)]
    if len(origins) <= 4 and all(o[0].shape == np.shape(res.data) for o in origins):
        try:
            res._gpuperf_lanes_from = tuple(origins)
        except AttributeError:  # pragma: no cover - a handle without a __dict__
            pass


def _carry_tile(res, operands) -> None:
    """``res`` of an elementwise operation (arithmetic, a cast, ``tl.where``, a library function) keeps the loaded
    tile tag (``_gpuperf_tile``: argument, bytes, shape, element size as loaded) of its first operand of its own
    shape that has one: ``q * scale``, ``k.to(tl.float32)``, ``tl.where(mask, k, 0.0)`` multiplied by a
    ``tl.dot`` are the tiles loaded from q and k, counted as loaded (:meth:`Trace.dot_tile_bytes`). A value of
    another shape (a broadcast row, a reduction) passes nothing on, nor does a product (``tl.dot``): P of
    ``p @ v`` is computed on chip from S, not a tile loaded from memory."""
    import numpy as np

    if res is None or not _has_data(res):
        return
    shape = np.shape(res.data)
    for a in operands:
        tile = _attr(a, "_gpuperf_tile", None)
        if tile is not None and np.shape(a.data) == shape:
            try:
                res._gpuperf_tile = tile
            except AttributeError:  # pragma: no cover - a handle without a __dict__
                pass
            return


def _move_tile(name, res, args) -> None:
    """``res`` of a move (:data:`_MOVES`) keeps the loaded tile tag of its operand (a transpose, a reshape, a
    size-1 axis); a join or concatenation of two tiles loaded from the same argument is one tile of both their
    bytes, of one another's the first's. (Split halves are not tagged: the tile they came from was loaded
    whole.)"""
    import numpy as np

    if res is None or not _has_data(res) or name == "create_split":
        return
    tiles = [_attr(a, "_gpuperf_tile", None) for a in args if _has_data(a)]
    tiles = [t for t in tiles if t is not None]
    if not tiles:
        return
    tile = tiles[0]
    if name in ("create_join", "create_cat") and len(tiles) == 2 and tiles[0][0] == tiles[1][0]:
        tile = (tile[0], tiles[0][1] + tiles[1][1], tuple(int(n) for n in np.shape(res.data)), tile[3])
    try:
        res._gpuperf_tile = tile
    except AttributeError:  # pragma: no cover - a handle without a __dict__
        pass


#: the attribute of a value's per-lane derivations (:func:`_carry_derived`)
_DERIVED = "_gpuperf_derived_from"
#: the most loaded elements one lane's derivation keeps (the grader's tensors' first)
_DERIVED_MOST = 16
#: elementwise builder operations that are no copy of a lane (:data:`_NOT_LANEWISE` leaves them out) but derive
#: each lane from the operands' lanes at its place
_DERIVED_ONLY = ("create_extern_elementwise", "create_umulhi", "create_inline_asm")


def _derived_from(handle):
    """Where each lane of ``handle`` was derived from: ``((addresses, loaded), ...)`` per loaded element that the
    lane was computed from lane by lane (:func:`_carry_derived`), its copies' origins included; None if none."""
    found = getattr(handle, _DERIVED, None)
    return found if found is not None else _attr(handle, "_gpuperf_lanes_from", None)


def _in_owner(origin) -> bool:
    """``origin`` (an array of addresses) starts in one of the grader's tensors of the traced call."""
    if not origin.size:
        return False
    first = int(origin.flat[0])
    return any(span[0] <= first < span[1] for span in getattr(_TRACE, "_owner_spans", ()))


def _carry_derived(res, handles) -> None:
    """``res`` of an elementwise operation of ``handles``: each lane is derived from the loaded elements that the
    operands' lanes at its place were derived from (a loaded value's lane from its own element), whatever the
    other operands were computed from: ``k * (1 + 2^-20 + 0 * tl.sum(k, 0))``, ``k * scale`` with a loaded
    scale, ``tl.exp(k - m)``, ``k + offset`` are derived from k, lane by lane. A value computed from a lane of
    another place (a reduction, a broadcast, a gather, a tile product) derives nothing from it. At most
    :data:`_DERIVED_MOST` loaded elements a lane, those in the grader's tensors kept first."""
    import numpy as np

    if res is None or not _has_data(res):
        return
    shape = np.shape(res.data)
    origins: list = []
    for a in handles:
        for o in _derived_from(a) or ():
            if o[0].shape == shape and not any(o[0] is seen[0] for seen in origins):
                origins.append(o)
    if not origins:
        return
    if len(origins) > _DERIVED_MOST:
        origins.sort(key=lambda o: not _in_owner(o[0]))  # (stable: in order otherwise)
        origins = origins[:_DERIVED_MOST]
    try:
        setattr(res, _DERIVED, tuple(origins))
    except AttributeError:  # pragma: no cover - a handle without a __dict__
        pass


def _carry_equal_lanes(res, carrying) -> None:
    """``res`` of an elementwise operation of loaded operands with origins (``carrying``) and others computed
    from loads: its lanes that hold exactly the value of a carrying operand's lane (same dtype; ``k + 0.0 *
    tl.sum(k, 0)``, ``k * (1 + 0 * s)``, ``k + (s - s)``) keep that operand's origins, as a copy of it: the
    other operands changed nothing there. Lanes that differ have none."""
    import numpy as np

    r = np.asarray(res.data)
    origins: list = []
    for a in carrying:
        x = np.asarray(a.data)
        if x.shape != r.shape or x.dtype != r.dtype:
            continue
        same = r == x
        if r.dtype.kind == "f":
            same |= np.isnan(r) & np.isnan(x)
        if not same.any():
            continue
        for origin, loaded in a._gpuperf_lanes_from:
            if origin.shape == r.shape and not any(origin is seen for seen, _ in origins):
                origins.append((origin, loaded & same))
    if origins and len(origins) <= 4:
        try:
            res._gpuperf_lanes_from = tuple(origins)
        except AttributeError:  # pragma: no cover - a handle without a __dict__
            pass


#: builder operations that move lanes without changing their values (no lane is duplicated or combined):
#: :func:`_move_lanes` moves the lanes' origins with them
_MOVES = ("create_trans", "create_reshape", "create_expand_dims", "create_join", "create_split", "create_cat")


def _move_lanes(name, res, args, kwargs, attr: str = "_gpuperf_lanes_from") -> None:
    """``res`` of ``name`` (one of :data:`_MOVES`, or ``"T"`` for ``x.T``) applied to ``args``: where its
    operands carry per-lane origins (:func:`_carry_lanes`) and nothing else loaded, each lane of ``res`` keeps
    the origins of the operand lane the operation moved there, moved the way the interpreter moves the values
    (``np.transpose``, ``reshape``, ``np.stack``, ``np.concatenate``). An operand of two (a join or a
    concatenation) that carries no origins and no source (a constant) gives its lanes no origin. With ``attr`` =
    :data:`_DERIVED`, the lanes' derivations (:func:`_carry_derived`) move the same way, whatever the other
    operand of a join holds."""
    import numpy as np

    def lanes_of(a):
        return _derived_from(a) if attr == _DERIVED else getattr(a, attr, None)

    handles = [a for a in args if _has_data(a)]
    if not handles or (attr != _DERIVED and any(lanes_of(a) is None and _sources(a) for a in handles)):
        return
    first = handles[0]
    if name in ("create_join", "create_cat"):
        if len(handles) != 2:
            return
        count = max(len(lanes_of(a) or ()) for a in handles)
        if not count:
            return

        kind = next(lanes_of(a)[0][0].dtype for a in handles if lanes_of(a))

        def side(a, i):
            found = lanes_of(a) or ()
            if i < len(found):
                return found[i]
            shape = np.shape(a.data)  # no origin: a constant, or fewer origins than the other side
            return np.zeros(shape, dtype=kind), np.zeros(shape, dtype=bool)

        glue = (lambda x, y: np.stack([x, y], axis=-1)) if name == "create_join" else \
            (lambda x, y: np.concatenate([x, y]))
        try:
            moved = []
            for i in range(count):
                (o1, a1), (o2, a2) = side(handles[0], i), side(handles[1], i)
                moved.append((glue(o1.astype(kind, copy=False), o2.astype(kind, copy=False)), glue(a1, a2)))
        except ValueError:
            return
        _set_lanes(res, moved, attr)
        return
    lanes_from = lanes_of(first)
    if lanes_from is None or len(handles) != 1:
        return
    rest = list(args[1:]) + list(kwargs.values())
    if name == "T":
        how = np.transpose
    elif name == "create_trans":
        how = lambda x: np.transpose(x, rest[0])  # noqa: E731
    elif name == "create_reshape":
        how = lambda x: x.reshape(rest[0])  # noqa: E731
    elif name == "create_expand_dims":
        how = lambda x: np.expand_dims(x, rest[0])  # noqa: E731
    elif name == "create_split":
        if not isinstance(res, (tuple, list)) or len(res) != 2:
            return
        for i, part in enumerate(res):
            _set_lanes(part, [(o[..., i], a[..., i]) for o, a in lanes_from], attr)
        return
    else:
        return
    try:
        moved = [(how(o), how(a)) for o, a in lanes_from]
    except (ValueError, TypeError, IndexError):
        return
    _set_lanes(res, moved, attr)


def _set_lanes(res, moved, attr: str = "_gpuperf_lanes_from") -> None:
    import numpy as np

    if res is None or not _has_data(res) or not moved:
        return
    if all(o.shape == np.shape(res.data) for o, _ in moved):
        try:
            setattr(res, attr, tuple(moved))
        except AttributeError:  # pragma: no cover - a handle without a __dict__
            pass


def _pieces(unique, width):
    """The addresses at which a write of ``width``-byte lanes at ``unique`` (sorted) is recorded as the last
    write (:attr:`Trace._written`): each lane's first byte, and for lanes wider than 4 bytes every 4th byte of
    it, so that a load or a torch copy of a part of an element (the high half of an int64) finds its writer."""
    import numpy as np

    if not width or width <= 4 or not unique.size:
        return unique
    spread = (unique.astype(np.uint64)[:, None] + np.arange(0, width, 4, dtype=np.uint64)[None, :]).reshape(-1)
    return np.unique(spread).astype(unique.dtype, copy=False)


def _note_stored(launch, unique, sources) -> None:
    """Remember that ``launch`` stored a value computed from ``sources`` at ``unique`` (sorted addresses)."""
    if not sources or not unique.size:
        return
    entry = launch._stored_sources.get(sources)
    if entry is None:
        launch._stored_sources[sources] = [int(unique[0]), int(unique[-1]), [unique], None]
    else:
        entry[0], entry[1] = min(entry[0], int(unique[0])), max(entry[1], int(unique[-1]))
        entry[2].append(unique)


def _stored_sources(launch, unique) -> frozenset:
    """The sources of what ``launch`` itself stored (earlier, in any program) at any of ``unique`` (sorted
    addresses): a value loaded back in the same launch carries them (per address, so a kernel that loads one
    part of a buffer it writes elsewhere inherits nothing)."""
    import numpy as np

    found = frozenset()
    if not launch._stored_sources or not unique.size:
        return found
    low, high = int(unique[0]), int(unique[-1])
    for sources, entry in launch._stored_sources.items():
        if high < entry[0] or low > entry[1] or sources <= found:
            continue
        if entry[2]:
            parts = entry[2] if entry[3] is None else [entry[3]] + entry[2]
            entry[3], entry[2] = np.unique(np.concatenate(parts)), []
        merged = entry[3]
        idx = np.clip(np.searchsorted(merged, unique), 0, merged.size - 1)
        if (merged[idx] == unique).any():
            found = found | sources
    return found


def _loads(handle) -> frozenset:
    return _attr(handle, "_gpuperf_loads", frozenset())


def _returned(handle) -> frozenset:
    """The atomics (indices into :attr:`Launch._returned`) whose returned values ``handle`` was computed from."""
    return _attr(handle, "_gpuperf_ret", frozenset())


#: the program id among the values a handle depends on (``_gpuperf_who``), beside atomics' returned values
_PROGRAM_ID = -1
_WHO_PID = frozenset((_PROGRAM_ID,))


def _constant_value(handle, active):
    """``(dtype, value)`` of an atomic's operand that holds one value in all its active lanes and was computed
    from nothing loaded, returned or made from the program id (``tl.atomic_add(counter, 1)``), else None."""
    import numpy as np

    if handle is None or not _has_data(handle) or _sources(handle) or _loads(handle) or \
            _returned(handle) or _who(handle) or _attr(handle, "_gpuperf_pid", False):
        return None
    data = np.asarray(handle.data)
    if data.shape != np.shape(active):
        try:
            data = np.broadcast_to(data, np.shape(active))
        except ValueError:
            return None
    lanes = data[np.asarray(active, dtype=bool)] if data.ndim else data.reshape(1)
    if not lanes.size or np.any(lanes != lanes.flat[0]):
        return None
    return str(data.dtype), lanes.flat[0].item()


def _who(handle) -> frozenset:
    """What ``handle`` depends on that differs from program to program: the program id (:data:`_PROGRAM_ID`)
    and atomics' returned values (indices into :attr:`Launch._returned`), through its value and, for a
    loaded value, the address and mask it was loaded with (x loaded at the program id's rows depends on it)."""
    return _attr(handle, "_gpuperf_who", frozenset())


#: among the nodes a value carries the program id through (:func:`_pid_atoms`): the program id reached it by a
#: way no node records; never the same in two programs
_OPAQUE = -1


def _pid_atoms(handle) -> frozenset:
    """The nodes (:attr:`Launch._pid_nodes`: values computed from the program id and constants alone) through
    which the program id reached ``handle``: the node itself where ``handle`` is one, else those it was computed
    from (a load: those of its address and mask), :data:`_OPAQUE` where the program id came some other way."""
    node = _attr(handle, "_gpuperf_pnode", None)
    if node is not None:
        return frozenset((node,))
    via = _attr(handle, "_gpuperf_pvia", None)
    if via is not None:
        return via
    return frozenset((_OPAQUE,)) if _PROGRAM_ID in _who(handle) else frozenset()


def _value_key(handle):
    """A key of ``handle``'s value (type, shape, bytes): equal keys, equal values."""
    import hashlib

    import numpy as np

    data = np.asarray(handle.data)
    raw = data.tobytes()
    if len(raw) > 64:
        raw = hashlib.blake2b(raw, digest_size=16).digest()
    return str(getattr(handle, "dtype", "")), data.dtype.str, data.shape, raw


def _note_pid_node(launch, program: int, res, key: tuple, operands: tuple) -> None:
    """Make ``res`` the node of ``key`` (an operation and its operands: nodes and constants) and note its value
    in ``program``."""
    node = launch._pid_nodes.get(key)
    if node is None:
        node = launch._pid_nodes[key] = len(launch._pid_operands)
        launch._pid_operands.append(operands)
        launch._pid_values.append({})
    res._gpuperf_pnode = node
    launch._pid_values[node][program] = _value_key(res)


def _pid_operation(launch, program: int, res, name: str, operands) -> None:
    """Where ``res`` of the builder's operation ``name`` was computed from the program id and constants alone
    (operands that are nodes or carry nothing a program chose or loaded), make it a node (:func:`_note_pid_node`):
    ``pid // SPLITS``, ``block_m * BM + tl.arange(0, BM)``, a pointer plus such rows."""
    if res is None or not _has_data(res):
        return
    key, nodes = [name], []
    for value in operands:
        if _has_data(value):
            node = _attr(value, "_gpuperf_pnode", None)
            plain = not _sources(value) and not _loads(value) and not _returned(value)
            if node is not None and plain and _who(value) == _WHO_PID:
                key.append(("node", node))
                nodes.append(node)
            elif plain and not _who(value):
                key.append(("constant", _value_key(value)))
            else:
                return
        elif isinstance(value, (list, tuple)) and any(_has_data(v) for v in value):
            return
        else:
            key.append(("argument", repr(value)))
    if nodes:
        _note_pid_node(launch, program, res, tuple(key), tuple(nodes))


def _same_in(launch, atoms: frozenset, group: frozenset, memo: dict) -> bool:
    """Whether each node of ``atoms`` has one value in all the programs of ``group``: seen there with one value,
    or computed from nodes that each have one (a function of them). A node not computed in some program of the
    group counts as differing, unless its operands decide it."""
    for atom in atoms:
        stack = [atom]
        while stack:
            node = stack[-1]
            if node in memo:
                stack.pop()
                continue
            if node == _OPAQUE:
                memo[node] = False
                stack.pop()
                continue
            values = launch._pid_values[node]
            seen = {values.get(p) for p in group}
            if None not in seen and len(seen) == 1:
                memo[node] = True
                stack.pop()
                continue
            operands = launch._pid_operands[node]
            pending = [o for o in operands if o not in memo]
            if pending:
                stack.extend(pending)
                continue
            memo[node] = bool(operands) and all(memo[o] for o in operands)
            stack.pop()
        if not memo[atom]:
            return False
    return True


def _note_stored_loads(launch, program: int, unique, loads) -> None:
    """Remember that ``program`` of ``launch`` wrote a value computed from ``loads`` (:attr:`Launch.visits`
    indices) at ``unique`` (sorted addresses); a value computed from no load is kept only to overwrite earlier
    ones (the latest write of an address is what a load reads)."""
    if not unique.size:
        return
    entry = launch._stored_loads.get(program)
    if entry is None:
        if not loads:
            return
        entry = launch._stored_loads[program] = [int(unique[0]), int(unique[-1]), []]
    entry[0], entry[1] = min(entry[0], int(unique[0])), max(entry[1], int(unique[-1]))
    entry[2].append((int(unique[0]), int(unique[-1]), unique, loads))


def _stored_loads(launch, program: int, unique) -> frozenset:
    """The loads that what ``program`` of ``launch`` wrote last at any of ``unique`` (sorted addresses) was
    computed from (:func:`_note_stored_loads`): a block stored to the program's own scratch and loaded back
    carries the loads of the block it stored."""
    import numpy as np

    entry = launch._stored_loads.get(program)
    found = frozenset()
    if entry is None or not unique.size or int(unique[-1]) < entry[0] or int(unique[0]) > entry[1]:
        return found
    left = unique
    for low, high, addresses, loads in reversed(entry[2]):  # the latest write of each address first
        if int(left[-1]) < low or int(left[0]) > high:
            continue
        idx = np.clip(np.searchsorted(addresses, left), 0, addresses.size - 1)
        hit = addresses[idx] == left
        if hit.any():
            found = found | loads
            left = left[~hit]
            if not left.size:
                break
    return found


def _carry_sources(results, operands) -> None:
    """Give ``results`` (a handle, or a tuple or list of them) the union of the sources of ``operands``, and of
    the loads (:attr:`Launch.visits` indices) their values came from."""
    found = loads = returned = who = via = frozenset()
    bits = False
    for value in operands:
        for item in (value if isinstance(value, (list, tuple)) else (value,)):
            found = found | _sources(item)
            loads = loads | _loads(item)
            returned = returned | _returned(item)
            who = who | _who(item)
            via = via | _pid_atoms(item)
            bits = bits or _attr(item, "_gpuperf_bits", False)
    if bits:  # computed from bits reinterpreted (a bitcast): see :func:`_packed`
        for res in (results if isinstance(results, (list, tuple)) else (results,)):
            if res is not None and _has_data(res):
                try:
                    res._gpuperf_bits = True
                except AttributeError:  # pragma: no cover - a handle without a __dict__
                    pass
    if not found and not loads and not returned and not who:
        return
    for res in (results if isinstance(results, (list, tuple)) else (results,)):
        if res is not None and _has_data(res):
            try:
                if found:
                    res._gpuperf_src = found | _sources(res)
                if loads:
                    res._gpuperf_loads = loads | _loads(res)
                if returned:
                    res._gpuperf_ret = returned | _returned(res)
                if who:
                    res._gpuperf_who = who | _who(res)
                if via:  # the program id came through these nodes
                    res._gpuperf_pvia = via | _attr(res, "_gpuperf_pvia", frozenset())
            except AttributeError:  # pragma: no cover - a handle without a __dict__
                pass


class _Constant(int):
    """A size or stride a launch gave as ``tl.constexpr`` (see :func:`gpuperf.grading.frontend.
    stride_constexprs`): an int to the kernel, marked so that its constants carry ``_gpuperf_arg``."""


@contextlib.contextmanager
def traced(active: bool = True) -> Iterator["Trace | None"]:
    """Count what interpreted kernels do while the block runs (see the module docstring); yields the
    :class:`Trace` (``None`` when ``active`` is false or this Triton has no interpreter)."""
    global _TRACE
    if not active:
        yield None
        return
    try:
        saved = _install()
    except (ImportError, AttributeError):  # pragma: no cover - no interpreter: nothing to count
        yield None
        return
    trace = Trace()
    previous, _TRACE = _TRACE, trace
    try:
        yield trace
    finally:
        _TRACE = previous
        for owner, name, original in reversed(saved):
            setattr(owner, name, original)


def _address_runs(lanes, step: int):
    """The runs of consecutive elements (``step`` bytes apart at most) of addresses ``lanes``, as (first, last)
    address pairs, or None where they are one run."""
    import numpy as np

    lanes = np.unique(lanes)
    cuts = np.flatnonzero(np.diff(lanes) > step)
    if not cuts.size:
        return None
    starts, ends = np.concatenate(([0], cuts + 1)), np.concatenate((cuts, [lanes.size - 1]))
    return tuple(zip(lanes[starts].tolist(), lanes[ends].tolist()))


def _element_step(launch, name: str, width: int = 0) -> int:
    """Bytes between consecutive elements of argument ``name``: ``width`` (a lane's), else its element size."""
    return max(int(width), next((es for n, _, _, es, _ in launch.args if n == name), 1))


def _note_visit(launch, name: str, program: int, addresses, active, width: int = 0) -> None:
    """A block of ``name`` that ``program`` visited, whether or not its lanes are masked off (``active``: the
    addresses of the lanes that are not): its lowest and highest address, the tl.dot calls the program had made
    before it, and its active lanes' lowest and highest address (None if none), in the order of the visits
    (:attr:`Launch.visits`); and, where its active lanes or all its lanes are not one run of consecutive
    elements (of ``width`` bytes, else of the argument's element size), those runs (:attr:`Launch.visit_runs`)."""
    step = _element_step(launch, name, width)
    found = (_address_runs(active, step) if active.size else None, _address_runs(addresses, step))
    if found != (None, None):
        launch.visit_runs[len(launch.visits)] = found
    launch.visits.append((name, program, int(addresses.min()), int(addresses.max()),
                          launch.dots_run.get(program, 0),
                          (int(active.min()), int(active.max())) if active.size else None))
