"""replay_anchor (beyond the paper): the prefill's transitions kept for the whole run, a fixed share of
every batch drawn from them; and a run folder of a version without an option resumes under the new one."""

import json

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from scipy import stats

from jspgfn.cli import main as cli_main
from jspgfn.errors import JspgfnError
from jspgfn.gflownet import replay as replaylib
from jspgfn.gflownet.presets import get_preset
from jspgfn.gflownet.train import train
from test_gflownet_train import TINY, _leaves, assert_resumes_bitwise, data_dir  # noqa: F401 (data_dir: the shared fixture)

ANCHORED = {**TINY, "replay_capacity": 30, "replay_anchor": 0.25}


def _filled(num, d, edges_each, capacity):
    """A replay of capacity `capacity` holding `num` transitions from graphs with `edges_each` edges."""
    graph = np.zeros((d, d), np.uint8)
    graph[np.triu_indices(d, 1)[0][:edges_each], np.triu_indices(d, 1)[1][:edges_each]] = 1
    graphs = jnp.asarray(np.repeat(graph[None], num, axis=0))
    return replaylib.add(replaylib.init(capacity, d), graphs, jnp.zeros(num, jnp.int32), jnp.ones(num, bool))


def test_sample_mixed_takes_the_share_from_the_anchor_and_covers_both_buffers():
    replay, anchor = _filled(40, 4, 1, 50), _filled(12, 4, 3, 12)
    graphs, actions = replaylib.sample_mixed(replay, anchor, jax.random.PRNGKey(0), 16, 4)
    edges = np.asarray(graphs).sum(axis=(1, 2))
    assert graphs.shape == (16, 4, 4) and actions.shape == (16,)
    np.testing.assert_array_equal(edges, [1] * 12 + [3] * 4)
    # the anchor's part is uniform over its stored transitions (chi-square over 12 positions, 6,000 draws)
    marked = replaylib.Replay(anchor.graphs, jnp.arange(12, dtype=jnp.int32), anchor.index, anchor.size)
    _, drawn = replaylib.sample_mixed(replay, marked, jax.random.PRNGKey(1), 6001, 6000)
    assert stats.chisquare(np.bincount(np.asarray(drawn[1:]), minlength=12)).pvalue > 1e-3


def test_with_recent_keeps_the_last_transitions_in_order():
    d = 3
    source = replaylib.add(
        replaylib.init(10, d), jnp.zeros((7, d, d), jnp.uint8), jnp.arange(7, dtype=jnp.int32), jnp.ones(7, bool)
    )
    small = replaylib.with_recent(replaylib.init(4, d), source)
    assert int(small.size) == 4 and int(small.index) == 0
    np.testing.assert_array_equal(np.asarray(small.actions), [3, 4, 5, 6])
    large = replaylib.with_recent(replaylib.init(20, d), source)
    assert int(large.size) == 7
    np.testing.assert_array_equal(np.asarray(large.actions[:7]), np.arange(7))


def test_the_anchor_holds_the_prefill_for_the_whole_run(data_dir, tmp_path):  # noqa: F811
    """The anchor is the prefill's transitions (those a run without the option puts in a replay large enough),
    unchanged by training while the 30-transition replay evicts them; the run resumes bit for bit and
    differs from the run without it."""
    trainer, a, _ = train(data_dir, "lingauss-diag", "smoke", 0, tmp_path / "a", overrides=ANCHORED, progress=False)
    start = trainer.init(0)
    plain, _, _ = train(
        data_dir,
        "lingauss-diag",
        "smoke",
        0,
        tmp_path / "big",
        overrides={**TINY, "num_iterations": 10},
        progress=False,
    )
    prefill = plain.init(0).replay  # capacity 500: the prefill's transitions, none evicted
    size = int(prefill.size)
    assert int(start.anchor.size) == size > 30
    np.testing.assert_array_equal(np.asarray(start.anchor.graphs[:size]), np.asarray(prefill.graphs[:size]))
    np.testing.assert_array_equal(np.asarray(start.anchor.actions[:size]), np.asarray(prefill.actions[:size]))
    # the replay starts with the prefill's last 30 transitions
    np.testing.assert_array_equal(
        np.sort(np.asarray(start.replay.actions)), np.sort(np.asarray(prefill.actions[size - 30 : size]))
    )
    # 20 iterations later the replay has new transitions, the anchor is the same
    for x, y in zip(_leaves(a.anchor), _leaves(start.anchor)):
        np.testing.assert_array_equal(x, y)
    assert not np.array_equal(np.asarray(a.replay.graphs), np.asarray(start.replay.graphs))
    assert_resumes_bitwise(data_dir, "lingauss-diag", ANCHORED, tmp_path / "c", a)
    off = {**ANCHORED, "replay_anchor": 0.0}
    _, p, _ = train(data_dir, "lingauss-diag", "smoke", 0, tmp_path / "p", overrides=off, progress=False)
    assert p.anchor is None
    assert any(not np.array_equal(x, y) for x, y in zip(_leaves(p.params), _leaves(a.params)))


@pytest.mark.parametrize(
    "options, problem",
    [
        ({"batch_size": 8, "replay_anchor": 0.01}, "takes 0 of a batch of 8"),
        ({"batch_size": 8, "replay_anchor": 1.0}, "takes 8 of a batch of 8"),
        ({"replay_anchor": 0.1, "prefill": 0}, "needs prefill > 0"),
        ({"replay_anchor": 0.1, "replay_priority": 0.5}, "replay_priority 0"),
    ],
)
def test_anchor_settings_without_two_buffers_are_refused(options, problem):
    with pytest.raises(JspgfnError, match=problem):
        get_preset("smoke", **options)


def test_a_run_of_a_version_without_an_option_resumes(data_dir, tmp_path, capsys):  # noqa: F811
    """config.json of an older version has no key for an option added since: that run ran with the option's
    default, so it resumes; an option set to another value is still refused."""
    out = tmp_path / "run"
    args = ["train", str(data_dir), "--preset", "smoke", "--out", str(out), "--no-progress"]
    args += [f"--set={key}={value}" for key, value in TINY.items() if key != "num_iterations"]
    assert cli_main([*args, "--set", "num_iterations=20", "--max-iterations", "10"]) == 3
    config = json.loads((out / "config.json").read_text())
    del config["train_config"]["replay_anchor"]
    (out / "config.json").write_text(json.dumps(config))
    assert cli_main([*args, "--set", "num_iterations=20"]) == 0
    capsys.readouterr()
    assert cli_main([*args, "--set", "num_iterations=20", "--set", "replay_anchor=0.25"]) != 0
    assert "other training options (replay_anchor: 0.0 -> 0.25)" in capsys.readouterr().err
