"""Where a compiled program's time goes, per HLO op: a profiler trace joined with the compiled HLO.

`hlo_ops(hlo_text)` reads the compiled module's text (`jax.jit(f).lower(...).compile().as_text()`):
for every instruction its JAX source path (`op_name` metadata), its opcode and its matmul FLOPs
(2 x output elements x contracted size, summed over the dots of the computations it calls).
`op_times(profile_data)` sums the trace's event durations per HLO instruction over XLA's CPU
worker threads. `attribute(times, counts, ops, part_of)` joins the two into rows per part of the program.
Used by profile_iteration.py --xla-ops; pure functions over text and dicts, tested in
tests/test_xla_ops.py.
"""

import collections
import dataclasses
import math
import re

_COMPUTATION = re.compile(r"^(?:ENTRY )?%([\w.\-]+) \(.*\{$")
_INSTRUCTION = re.compile(r"^\s*(?:ROOT )?%([\w.\-]+) = (\w+)\[([\d,]*)\][^ ]* ([\w\-]+)\((.*)$")
_OP_NAME = re.compile(r'op_name="([^"]*)"')
_CALLS = re.compile(r"calls=%([\w.\-]+)")
_CONTRACTING = re.compile(r"lhs_contracting_dims=\{([\d,]*)\}")
_OPERANDS = re.compile(r"^%([\w.\-]+)")


@dataclasses.dataclass(frozen=True)
class HloOp:
    opcode: str
    op_name: str  # the JAX source path, e.g. "jit(f)/transpose(jvp(policy))/backbone/attention/query/dot_general"
    flops: float  # matmul FLOPs of this instruction and everything it calls (0 for copies, elementwise ops)


def _dims(text):
    return [int(x) for x in text.split(",") if x]


def hlo_ops(hlo_text):
    """{instruction name: HloOp} for every instruction of a compiled module's text (names are unique in it)."""
    shapes, lines = {}, {}
    computation = None
    members = collections.defaultdict(list)
    for line in hlo_text.splitlines():
        start = _COMPUTATION.match(line)
        if start:
            computation = start.group(1)
            continue
        m = _INSTRUCTION.match(line)
        if m:
            name = m.group(1)
            shapes[name] = _dims(m.group(3))
            lines[name] = (m.group(4), m.group(5))
            members[computation].append(name)

    def own_flops(name):
        opcode, rest = lines[name]
        if opcode != "dot":
            return 0.0
        lhs = _OPERANDS.match(rest.strip())
        contracting = _CONTRACTING.search(rest)
        if not lhs or not contracting or lhs.group(1) not in shapes:
            return 0.0
        lhs_dims = shapes[lhs.group(1)]
        return 2.0 * math.prod(shapes[name]) * math.prod(lhs_dims[i] for i in _dims(contracting.group(1)))

    computation_flops = {}  # HLO's call graph is acyclic: each computation's FLOPs once

    def flops_of_computation(comp):
        if comp not in computation_flops:
            computation_flops[comp] = sum(flops_of_instruction(member) for member in members.get(comp, []))
        return computation_flops[comp]

    def flops_of_instruction(name):
        opcode, rest = lines[name]
        total = own_flops(name)
        if opcode in ("fusion", "call", "custom-call"):  # not while/conditional: their bodies are instructions too
            total += sum(flops_of_computation(called) for called in _CALLS.findall(rest))
        return total

    ops = {}
    for name, (opcode, rest) in lines.items():
        op_name = _OP_NAME.search(rest)
        ops[name] = HloOp(opcode, op_name.group(1) if op_name else "", flops_of_instruction(name))
    return ops


def op_times(profile_data, thread_prefix="tf_XLAEigen"):
    """({HLO instruction name: nanoseconds summed over XLA's CPU worker threads}, {name: number of events},
    number of such threads) from a `jax.profiler.ProfileData`. The executor's own events (ThunkExecutor,
    thread-pool waits) are left out: they enclose or wait for the ops."""
    times, counts, threads = collections.Counter(), collections.Counter(), set()
    for plane in profile_data.planes:
        for line in plane.lines:
            if not line.name.startswith(thread_prefix):
                continue
            threads.add(line.name)
            for event in line.events:
                if event.name.startswith(("ThunkExecutor", "SlinkyThreadPool")):
                    continue
                times[event.name] += event.duration_ns
                counts[event.name] += 1
    return times, counts, len(threads)


def kind_of(name, op):
    """'matmul' (the op does matmul FLOPs), 'copy/transpose' (a layout change: no arithmetic) or 'other'."""
    if op is not None and op.flops > 0:
        return "matmul"
    if {"copy", "transpose"} & set(re.sub(r"[.\d]+$", "", name).split("_")):
        return "copy/transpose"
    return "other"


def attribute(times, counts, ops, part_of):
    """{part: Counter(ns=, matmul_ns=, copy_ns=, other_ns=, flops=)} of the traced op times (`op_times`), each
    op's part given by part_of(op_name) and its kind by `kind_of`; flops = the op's matmul FLOPs x its events."""
    rows = collections.defaultdict(collections.Counter)
    for name, ns in times.items():
        op = ops.get(name)
        part = part_of(op.op_name if op else "")
        kind = kind_of(name, op)
        row = rows[part]
        row["ns"] += ns
        row[{"matmul": "matmul_ns", "copy/transpose": "copy_ns", "other": "other_ns"}[kind]] += ns
        row["flops"] += (op.flops if op else 0.0) * counts[name]
    return dict(rows)
