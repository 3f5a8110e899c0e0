"""benchmarks/score_stop_offset.py's score report: with the closed-form offset, the score the offset used is the
float64 exact log P(D | G) + log P(G) (its error ~0), and the diagonal family's floor is minus the graphs' summed
mean-field gaps (<= 0, < 0 where a node has two correlated parents); the theta-free score of an untrained q is
far below both."""

import re
from types import SimpleNamespace

import numpy as np

from conftest import benchmark_module
from jspgfn.gflownet.presets import PRESETS
from jspgfn.models import get_graph_prior, get_model
from test_gflownet_train import TINY


def test_the_report_reads_the_closed_form_score_and_the_family_floor(capsys):
    report = benchmark_module("score_stop_offset")
    rng = np.random.default_rng(0)
    d = 4
    x = rng.normal(size=(40, d))
    x[:, 2] += 0.9 * x[:, 0] + 0.8 * x[:, 1]
    x[:, 1] += 0.7 * x[:, 0]
    x = x.astype(np.float32)
    options = {**TINY, "stop_score_offset": 1.0, "theta_elbo": 1.0, "stop_score_closed_form": True}
    cfg = PRESETS["smoke"].replace(**options)
    model = get_model("lingauss", obs_var=0.1)
    trainer = report.ReportingTrainer(cfg, model, get_graph_prior("uniform", d), "diag", x)
    state = trainer.init(0)
    graphs = np.zeros((3, d, d), np.uint8)
    graphs[1, [0, 1], 2] = 1  # correlated parents: a mean-field gap
    graphs[2, 0, 1] = 1
    trainer.report(state, graphs, SimpleNamespace(graphs=graphs[1:]), x)
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("#")]
    assert len(lines) == 2
    number = r"(-?[\d.]+) \+- ([\d.]+)"
    for line in lines:
        theta_free = [float(v) for v in re.search(f"theta-free score's error {number}", line).groups()]
        floor = [float(v) for v in re.search(f"floor {number}", line).groups()]
        closed = [float(v) for v in re.search(f"closed-form score's {number}", line).groups()]
        assert abs(closed[0]) < 0.05 and closed[1] < 0.05, line
        assert floor[0] < -0.01, line  # graph 1's gap
        assert theta_free[0] < floor[0] - 1.0, line  # q untrained: its score is far below its best
