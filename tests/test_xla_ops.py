"""benchmarks/_xla_ops.py: matmul FLOPs read from compiled HLO against the closed form, and traced op
times joined with them (the per-part profile of profile_iteration.py --xla-ops)."""

import glob
import os
import sys

import jax
import jax.numpy as jnp
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))
from _xla_ops import attribute, hlo_ops, kind_of, op_times  # noqa: E402


def _two_layers(x, w1, w2):
    with jax.named_scope("first"):
        h = jax.nn.relu(x @ w1)
    with jax.named_scope("second"):
        return jnp.tanh(h @ w2).T  # the transpose: a layout change


M, K, H, P = 64, 48, 96, 80
FLOPS_FIRST, FLOPS_SECOND = 2 * M * K * H, 2 * M * H * P


def _args():
    key = jax.random.PRNGKey(0)
    return [jax.random.normal(k, shape) for k, shape in zip(jax.random.split(key, 3), [(M, K), (K, H), (H, P)])]


def test_hlo_ops_counts_matmul_flops_and_source_paths():
    args = _args()
    compiled = jax.jit(_two_layers).lower(*args).compile()
    ops = hlo_ops(compiled.as_text())
    # Each dot of the module once, with its closed-form FLOPs and its source path.
    dots = {op.op_name: op.flops for op in ops.values() if op.opcode == "dot"}
    assert sorted(dots.values()) == sorted([FLOPS_FIRST, FLOPS_SECOND])
    assert [f for path, f in dots.items() if "/first/" in path] == [FLOPS_FIRST]
    assert [f for path, f in dots.items() if "/second/" in path] == [FLOPS_SECOND]
    # An op that calls a computation holding a dot (a fusion) carries that dot's FLOPs.
    callers = [op.flops for op in ops.values() if op.opcode != "dot" and op.flops > 0]
    assert all(f in (FLOPS_FIRST, FLOPS_SECOND) for f in callers)
    # XLA's own count of the module agrees with ours (the same dots).
    cost = compiled.cost_analysis()
    cost = cost[0] if isinstance(cost, (list, tuple)) else cost
    assert cost["flops"] == pytest.approx(FLOPS_FIRST + FLOPS_SECOND, rel=0.05)


def test_kind_of():
    ops = hlo_ops(jax.jit(_two_layers).lower(*_args()).compile().as_text())
    matmuls = [name for name, op in ops.items() if kind_of(name, op) == "matmul"]
    assert matmuls
    assert kind_of("copy_bitcast_fusion.3", None) == "copy/transpose"
    assert kind_of("transpose_copy_fusion", None) == "copy/transpose"
    assert kind_of("copy.12", None) == "copy/transpose"
    assert kind_of("broadcast_add_fusion.4", None) == "other"


def test_traced_ops_attributed_with_their_flops(tmp_path):
    args = _args()
    fn = jax.jit(_two_layers)
    ops = hlo_ops(fn.lower(*args).compile().as_text())
    jax.block_until_ready(fn(*args))
    calls = 5
    with jax.profiler.trace(str(tmp_path)):
        for _ in range(calls):
            jax.block_until_ready(fn(*args))
    (path,) = glob.glob(f"{tmp_path}/**/*.xplane.pb", recursive=True)
    times, counts, threads = op_times(jax.profiler.ProfileData.from_file(path), thread_prefix="")
    assert threads >= 1

    def part_of(op_name):
        return "first" if "/first/" in op_name else "second" if "/second/" in op_name else "rest"

    rows = attribute({n: t for n, t in times.items() if n in ops}, counts, ops, part_of)
    # Every call's dots were traced once: FLOPs per call equal the closed form, part by part.
    assert rows["first"]["flops"] / calls == FLOPS_FIRST
    assert rows["second"]["flops"] / calls == FLOPS_SECOND
    for row in rows.values():
        assert row["ns"] == row["matmul_ns"] + row["copy_ns"] + row["other_ns"]
    assert rows["first"]["matmul_ns"] > 0 and rows["second"]["matmul_ns"] > 0
