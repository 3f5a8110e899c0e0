"""benchmarks/compute_plan.py --predict: a preset's time from measured per-job times, scaled by budget."""

import importlib.util
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def plan():
    spec = importlib.util.spec_from_file_location("compute_plan", ROOT / "benchmarks" / "compute_plan.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _config(methods, num_datasets=2, **overlay):
    return {
        "preset": "quick",
        "experiments": {"e": {"num_datasets": num_datasets, "methods": methods, "data": {}}},
        "methods": overlay,
    }


def test_a_job_is_scaled_by_its_budget_and_the_dataset_count(plan, tmp_path):
    measured = tmp_path / "measured.csv"
    # MH-MC3 measured at 10 chains x (10,000 burn-in + 100 x 1,000 thinning) = 1,100,000 steps.
    measured.write_text("experiment,rule,method,seconds,cost,source\ne,baseline,mh-mc3,100,1100000,test\n")
    config = _config(["mh-mc3"])
    config["methods"] = {
        "mh-mc3": {"params": {"num_chains": 10, "burn_in": 5000, "thinning": 500, "num_samples": 1000}}
    }
    table = plan.predict(config, measured)
    row = table.iloc[0]
    # 10 x (5,000 + 100 x 500) = 550,000 steps: half the measured budget, on 2 datasets.
    assert row["ratio"] == pytest.approx(0.5)
    assert row["job_s"] == pytest.approx(100.0)
    assert row["slot_s"] == pytest.approx(100.0)


def test_a_jobs_fixed_cost_is_not_scaled(plan, tmp_path):
    measured = tmp_path / "measured.csv"
    measured.write_text(
        "experiment,rule,method,seconds,cost,source\n"
        "e,baseline,mh-mc3,100,1100000,test\n"
        "all,fixed,baseline,10,,start and imports\n"
    )
    config = _config(["mh-mc3"], num_datasets=1)
    config["methods"] = {
        "mh-mc3": {"params": {"num_chains": 10, "burn_in": 5000, "thinning": 500, "num_samples": 1000}}
    }
    table = plan.predict(config, measured)
    # 10 s of start-up, then the other 90 s at half the budget; the fixed row is no job of its own.
    assert list(table["rule"]) == ["baseline"]
    assert table.iloc[0]["job_s"] == pytest.approx(10 + 90 * 0.5)


def test_a_two_thread_job_takes_two_slots_and_a_variant_uses_its_models_measurement(plan, tmp_path):
    measured = tmp_path / "measured.csv"
    # jspgfn-diag measured at 6,000 iterations x batch 128 x 4 theta samples.
    measured.write_text("experiment,rule,method,seconds,cost,source\ne,jspgfn_train,jspgfn-diag,60,3072000,test\n")
    config = _config(["jspgfn-diag-short"], num_datasets=1)
    config["methods"] = {"jspgfn-diag-short": {"params": {"num_iterations": 3000}, "threads": 2}}
    row = plan.predict(config, measured).iloc[0]
    assert row["basis"] == "test" and row["ratio"] == pytest.approx(0.5)
    assert (row["job_s"], row["slot_s"]) == (pytest.approx(30.0), pytest.approx(60.0))


def test_a_method_without_a_measurement_is_flagged(plan, tmp_path):
    measured = tmp_path / "measured.csv"
    measured.write_text("experiment,rule,method,seconds,cost,source\n")
    row = plan.predict(_config(["b-pc"]), measured).iloc[0]
    assert row["basis"] == "no measurement"


def test_the_quick_preset_is_predicted_under_90_minutes_on_2_cores(plan, capsys):
    """The quick preset's promise (issue 26): every figure in <= 90 min of wall time on 2 cores, as predicted
    from the measured per-job times; every job of it has a measurement (or is counted in one)."""
    config = yaml.safe_load((ROOT / "config" / "quick.yaml").read_text())
    table = plan.predict(config)
    assert not (table["basis"] == "no measurement").any(), table[table["basis"] == "no measurement"]
    assert (
        not table["basis"].str.contains("not scaled").any()
        or (table.loc[table["basis"].str.contains("not scaled"), "ratio"] <= 1.0).all()
    )
    assert table["slot_s"].sum() / 2 <= 90 * 60
    job, slot, wall = plan.print_prediction(config)
    out = capsys.readouterr().out
    assert f"PREDICTED wall time on 2 cores {wall / 60:.0f} min" in out
    assert "| larger_graphs_mlp | 2 |" in out


def test_evaluations_count_one_job_per_method_and_dataset(plan, tmp_path):
    measured = tmp_path / "measured.csv"
    measured.write_text("experiment,rule,method,seconds,cost,source\ne,evaluate,,4,,test\n")
    table = plan.predict(_config(["b-pc", "b-ges", "mh-mc3"], num_datasets=5), measured)
    row = table[table["rule"] == "evaluate"].iloc[0]
    assert (row["jobs"], row["job_s"]) == (15, pytest.approx(60.0))


def test_rows_of_a_finished_run_predict_that_run(plan, tmp_path):
    """measured_rows of a run's benchmark files, read back by predict for the same config, give the run's
    own job times: each job at budget ratio 1, evaluations and sampling jobs counted per method."""
    import pandas as pd

    config = _config(["mh-mc3", "jspgfn-diag"], num_datasets=2)
    config["methods"] = {"jspgfn-diag": {"params": {"num_iterations": 1500}, "threads": 2}}
    bench = pd.DataFrame(
        [
            dict(experiment="e", rule=rule, method=method, dataset=str(k), s=s, max_rss=100.0)
            for rule, method, times in [
                ("baseline", "mh-mc3", (40.0, 60.0)),
                ("jspgfn_train", "jspgfn-diag", (100.0, 120.0)),
                ("jspgfn_sample", "jspgfn-diag", (10.0, 10.0)),
                ("evaluate", "mh-mc3", (3.0, 5.0)),
                ("evaluate", "jspgfn-diag", (4.0, 4.0)),
                ("aggregate", "", (2.0,)),
            ]
            for k, s in enumerate(times)
        ]
    )
    rows = plan.measured_rows(config, bench, "test run")
    assert "aggregate" not in set(rows["rule"])
    by_rule = {(r.rule, r.method): r for r in rows.itertuples()}
    assert by_rule[("baseline", "mh-mc3")].seconds == 50
    assert by_rule[("evaluate", "")].seconds == 4
    assert float(by_rule[("jspgfn_train", "jspgfn-diag")].cost) == plan.budget(config, "jspgfn-diag")
    assert "2 job(s)" in by_rule[("jspgfn_train", "jspgfn-diag")].source

    measured = tmp_path / "measured.csv"
    rows.to_csv(measured, index=False)
    table = plan.predict(config, measured)
    assert (table["ratio"] == 1.0).all()
    # 2 datasets: mh-mc3 2 x 50, training 2 x 110 (2 threads), sampling 2 x 10, evaluations 4 x 4.
    assert table["job_s"].sum() == pytest.approx(100 + 220 + 20 + 16)
    assert table["slot_s"].sum() == pytest.approx(100 + 440 + 20 + 16)
