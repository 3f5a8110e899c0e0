"""Recipes (gflownet/recipes.py): named option sets chosen by d, their precedence under --set, what a run folder
records, and the CLI's refusals and warning."""

import json
import warnings

import numpy as np
import pytest

from jspgfn.cli import main as cli_main
from jspgfn.errors import JspgfnError, OptionWarning
from jspgfn.gflownet.presets import TrainConfig, get_preset
from jspgfn.gflownet.recipes import LINGAUSS_ITERATIONS, budget_note, measured_size, recipe_budget, recipe_options
from jspgfn.gflownet.train import make_config

COMMON = {"stop_score_offset": 1.0, "theta_elbo": 1.0, "stop_target_tau": 0.1, "replay_capacity": 5000,
          "explore_score_temperature": 1.0, "explore_score_share": 0.75, "backward_every": 15}  # fmt: skip


def test_the_paper_recipe_sets_nothing():
    assert recipe_options("paper", 20, "mlp-gauss") == {}


@pytest.mark.parametrize(
    "d, closed_form, batch, size",
    [(2, True, 0.5, 5), (5, True, 0.5, 5), (7, True, 0.5, 5), (8, True, 0.0, 10), (10, True, 0.0, 10),
     (14, True, 0.0, 10), (15, False, 0.5, 20), (20, False, 0.5, 20), (61, False, 0.5, 20)],
)  # fmt: skip
def test_the_lingauss_recipe_follows_the_measured_sizes(d, closed_form, batch, size):
    """Closed-form offset with the backward trajectories in a buffer of their own up to d=7 (measured at 5), in the
    replay up to d=14 (measured at 10), q's offset with a buffer of their own beyond (measured at 20)."""
    options = recipe_options("lingauss", d, "lingauss")
    assert {k: options[k] for k in COMMON} == COMMON
    assert options.get("stop_score_closed_form", False) is closed_form
    assert options.get("backward_batch", 0.0) == batch
    assert measured_size(d) == size
    cfg = get_preset("quick", **options)  # every option valid together
    assert cfg.stop_score_closed_form is closed_form and cfg.backward_batch == batch


def test_unknown_recipes_and_other_models_are_refused():
    with pytest.raises(JspgfnError, match="unknown recipe 'fast': choose one of paper, lingauss"):
        recipe_options("fast", 5, "lingauss")
    with pytest.raises(JspgfnError, match="for the linear Gaussian model only.*not 'mlp-gauss'"):
        recipe_options("lingauss", 5, "mlp-gauss")


def test_a_run_config_takes_the_recipe_under_the_options_set_explicitly():
    x = np.zeros((30, 10), np.float32)
    config = make_config(x, "lingauss", "quick", 0, {"backward_every": 30, "num_iterations": 100}, recipe="lingauss")
    assert config["recipe"] == "lingauss"
    assert config["recipe_options"] == recipe_options("lingauss", 10, "lingauss")
    assert config["overrides"] == {"backward_every": 30, "num_iterations": 100}
    train_config = config["train_config"]
    assert train_config["backward_every"] == 30 and train_config["num_iterations"] == 100  # --set wins
    assert train_config["stop_score_closed_form"] is True and train_config["replay_capacity"] == 5000
    # without a recipe the config is as before: no key of its own, the preset's options
    plain = make_config(x, "lingauss", "quick", 0, {})
    assert "recipe" not in plain and "recipe_options" not in plain
    assert plain["train_config"] == TrainConfig(num_iterations=6000).to_dict()


def test_the_budget_note_is_for_runs_shorter_than_the_recipes_budget():
    assert recipe_budget("lingauss") == LINGAUSS_ITERATIONS == 15_000
    assert recipe_budget("paper") is None and recipe_budget(None) is None
    assert "15,000" in budget_note("lingauss", 20, 6000) and "dense phases" in budget_note("lingauss", 20, 6000)
    assert "dense phases" in budget_note("lingauss", 15, LINGAUSS_ITERATIONS - 1)
    assert "fewer runs met its targets" in budget_note("lingauss", 14, 100)
    assert "fewer runs met its targets" in budget_note("lingauss", 5, 6000)
    for d in (5, 14, 20):
        assert budget_note("lingauss", d, LINGAUSS_ITERATIONS) is None
    assert budget_note("paper", 20, 100) is None
    assert budget_note(None, 20, 100) is None


def test_a_run_without_a_preset_takes_the_recipes_budget_and_a_named_preset_keeps_its_own():
    x = np.zeros((30, 5), np.float32)
    config = make_config(x, "lingauss", None, 0, {}, recipe="lingauss")
    assert config["preset"] == "quick" and config["train_config"]["num_iterations"] == LINGAUSS_ITERATIONS
    assert config["recipe_options"] == {
        **recipe_options("lingauss", 5, "lingauss"),
        "num_iterations": LINGAUSS_ITERATIONS,
    }
    # the rest of the quick preset is unchanged
    quick_rest = get_preset("quick", **recipe_options("lingauss", 5, "lingauss")).replace(
        num_iterations=LINGAUSS_ITERATIONS
    )
    assert config["train_config"] == quick_rest.to_dict()
    # --set wins over the recipe's budget; a named preset keeps its own budget; no recipe: the quick preset
    assert (
        make_config(x, "lingauss", None, 0, {"num_iterations": 900}, recipe="lingauss")["train_config"][
            "num_iterations"
        ]
        == 900
    )
    assert make_config(x, "lingauss", "quick", 0, {}, recipe="lingauss")["train_config"]["num_iterations"] == 6000
    assert make_config(x, "lingauss", None, 0, {})["train_config"] == TrainConfig(num_iterations=6000).to_dict()
    assert make_config(x, "lingauss", None, 0, {}, recipe="paper")["train_config"]["num_iterations"] == 6000


def _data(tmp_path, d):
    data = tmp_path / f"d{d}"
    assert cli_main(["generate", "--graph", "er1", "--model", "linear", "--d", str(d), "--n", "30", "--seed", "3",
                     "--out", str(data)]) == 0  # fmt: skip
    return data


TINY = ["--set", "num_iterations=20", "--set", "iterations_per_dispatch=10", "--set", "prefill=20", "--set",
        "batch_size=8", "--set", "num_envs=2", "--set", "num_theta_samples=2", "--set", "backward_every=5"]  # fmt: skip


def test_the_cli_trains_with_a_recipe_and_resumes_only_with_it(tmp_path, capsys):
    data, run = _data(tmp_path, 4), tmp_path / "run"
    args = ["train", str(data), "--preset", "smoke", "--recipe", "lingauss", "--no-progress", "--out", str(run)]
    assert cli_main(args + TINY) == 0
    config = json.loads((run / "config.json").read_text())
    assert config["recipe"] == "lingauss"
    assert config["train_config"]["stop_score_closed_form"] is True and config["train_config"]["backward_batch"] == 0.5
    assert config["train_config"]["backward_every"] == 5 and config["train_config"]["replay_capacity"] == 5000
    capsys.readouterr()
    # the same run without the recipe has other training options: refused, the folder kept
    assert cli_main(args[:4] + args[6:] + TINY) == 2
    assert "existing run has other training options" in capsys.readouterr().err
    assert json.loads((run / "config.json").read_text()) == config


def test_the_cli_without_a_preset_trains_to_the_recipes_budget(tmp_path, capsys):
    data, run = _data(tmp_path, 4), tmp_path / "run"
    small = TINY[2:]  # TINY less its num_iterations
    assert TINY[:2] == ["--set", "num_iterations=20"] and "num_iterations" not in " ".join(small)
    args = ["train", str(data), "--recipe", "lingauss", "--no-progress", "--max-iterations", "10", "--out", str(run)]
    assert cli_main(args + small) == 3  # stopped at 10 of the recipe's 15,000
    assert "stopped at iteration 10 of 15000" in capsys.readouterr().err
    config = json.loads((run / "config.json").read_text())
    assert config["preset"] == "quick" and config["train_config"]["num_iterations"] == LINGAUSS_ITERATIONS
    assert config["recipe_options"]["num_iterations"] == LINGAUSS_ITERATIONS


def test_the_cli_refuses_the_recipe_for_the_mlp_model_and_warns_on_a_short_large_graph_run(tmp_path, capsys):
    data = _data(tmp_path, 4)
    assert (
        cli_main(["train", str(data), "--model", "mlp-gauss", "--recipe", "lingauss", "--out", str(tmp_path / "m")])
        == 2
    )
    err = capsys.readouterr().err
    assert err.startswith("jspgfn: error: the recipe 'lingauss' is for the linear Gaussian model only")
    assert not (tmp_path / "m").exists()
    # at d=15 the large-graph options, measured over 15,000 iterations: a warning with fewer (train_group warns
    # before the trainer is built), which the CLI shows on one line
    from jspgfn.cli import _show_warning
    from jspgfn.gflownet.train import _warn_budget

    with pytest.warns(OptionWarning, match="measured with 15,000 iterations") as caught:
        _warn_budget("lingauss", make_config(np.zeros((30, 15)), "lingauss", "quick", 0, {}, recipe="lingauss"))
    _show_warning(caught[0].message, caught[0].category, "train.py", 1)
    assert capsys.readouterr().err.startswith("jspgfn: warning: the recipe 'lingauss' at d=15 was measured with")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _warn_budget("lingauss", make_config(np.zeros((30, 15)), "lingauss", "quick", 0, {"num_iterations": 15000},
                                             recipe="lingauss"))  # fmt: skip


def test_the_python_api_takes_a_recipe(tmp_path):
    import jspgfn

    x = np.random.default_rng(0).normal(size=(30, 3))
    tiny = {"num_iterations": 10, "iterations_per_dispatch": 10, "prefill": 10, "batch_size": 4, "num_envs": 2,
            "num_theta_samples": 1, "backward_every": 5}  # fmt: skip
    run = jspgfn.fit(x, preset="smoke", out=tmp_path / "run", recipe="lingauss", progress=False, **tiny)
    config = json.loads((run.folder / "config.json").read_text())
    assert config["recipe"] == "lingauss" and config["train_config"]["stop_score_offset"] == 1.0
    assert run.sample(5).graphs.shape == (5, 3, 3)
    with pytest.raises(JspgfnError, match="unknown recipe"):
        jspgfn.fit(x, preset="smoke", out=tmp_path / "other", recipe="fast", progress=False)
    assert not (tmp_path / "other").exists()
