"""Recipes: named sets of training options, chosen by the number of variables d.

    options = recipe_options("lingauss", d=20, likelihood="lingauss")   -> {option: value}

"paper" (the default) is the paper's method: no option. "lingauss" is beyond the paper: the options measured
closest to the exact posterior with the linear Gaussian model (diagonal family; ER1 / ER2 data with N=100) at
d=5, 10, 15 and 20 (docs/jspgfn-beyond-d5.md, docs/decisions.md "A recipe for the linear Gaussian model").
At the sizes between, the options of the range they fall in apply (the bounds are not measured). The options a
user sets explicitly win over a recipe's (train.make_config); the run's config.json records the recipe and every
option it set.

A recipe may also carry the budget it was measured with (recipe_budget): it applies when no training preset is named
(`jspgfn train --recipe lingauss` without --preset trains the quick preset with 15,000 iterations); a named preset
keeps its own, with a warning below the recipe's budget (budget_note).
"""

from jspgfn.errors import JspgfnError

# Common to every size: the stop offset (the score of G without theta, added to the stop logit), the
# trained ELBO of q, a target network for the child's stop, a replay of the last 600 iterations' transitions,
# three quarters of the exploratory actions by the closed-form score gains, and every 15 iterations the
# trajectories to graphs next to the sampler's, moved by the closed-form score.
_COMMON = {
    "stop_score_offset": 1.0,
    "theta_elbo": 1.0,
    "stop_target_tau": 0.1,
    "replay_capacity": 5000,
    "explore_score_temperature": 1.0,
    "explore_score_share": 0.75,
    "backward_every": 15,
}

# (largest d, options over the common ones, the size they were measured at)
_LINGAUSS_BY_SIZE = (
    # d=5: closed-form offset, backward trajectories in a buffer of their own (complete-DAG mass target 4 of 5)
    (7, {"stop_score_closed_form": True, "backward_batch": 0.5}, 5),
    # d=10: closed-form offset, backward trajectories in the replay (edge RMSE 0.040 over ten datasets)
    (14, {"stop_score_closed_form": True}, 10),
    # d=20: q's offset (the closed form went to complete DAGs there; at d=15 it was behind q's on two datasets), a
    # buffer of their own, 15,000 iterations
    (None, {"stop_score_closed_form": False, "backward_batch": 0.5}, 20),
)

# The budget at which every measured size met its targets against the exact posterior (docs/decisions.md, "A recipe
# for the linear Gaussian model"): d=5 complete-DAG mass on 14 of 15 runs (9 of 15 at 6,000), d=10 edge RMSE under
# 0.05 on 20 of 20 runs, ten datasets and two seeds (8 of 10 at 6,000), d=20 both targets on 4 of 4 runs (dense
# phases before 15,000).
LINGAUSS_ITERATIONS = 15_000
_BUDGETS = {"lingauss": LINGAUSS_ITERATIONS}

RECIPES = ("paper", "lingauss")


def recipe_options(name, d, likelihood):
    """{training option: value} of recipe `name` for d variables (an empty dict for "paper").

    JspgfnError for an unknown recipe, or "lingauss" with another likelihood than lingauss (its options
    use the model's closed-form score).
    """
    if name not in RECIPES:
        raise JspgfnError(f"unknown recipe {name!r}: choose one of {', '.join(RECIPES)}")
    if name == "paper":
        return {}
    if likelihood != "lingauss":
        raise JspgfnError(
            f"the recipe 'lingauss' is for the linear Gaussian model only (its options use the closed-form "
            f"score), not {likelihood!r}: leave --recipe out, or set options one by one"
        )
    return {**_COMMON, **_size_range(d)[1]}


def _size_range(d):
    """The row of _LINGAUSS_BY_SIZE whose range holds d variables."""
    return next(row for row in _LINGAUSS_BY_SIZE if row[0] is None or d <= row[0])


def measured_size(d):
    """The d at which the lingauss recipe's options for d variables were measured."""
    return _size_range(d)[2]


def recipe_budget(name):
    """The number of training iterations recipe `name` was measured with, or None (the preset's: "paper",
    None)."""
    return _BUDGETS.get(name)


def budget_note(name, d, num_iterations):
    """A one-line warning when a recipe's options for d variables run with fewer iterations than they were
    measured with, else None. The large-graph options' runs passed through dense phases before 15,000
    iterations; the others met their targets on fewer runs at 6,000."""
    budget = recipe_budget(name)
    if budget is None or num_iterations >= budget:
        return None
    if measured_size(d) >= 20:
        why = "its runs passed through dense phases before that"
    else:
        why = "with 6,000 fewer runs met its targets against the exact posterior"
    return (
        f"the recipe {name!r} at d={d} was measured with {budget:,} iterations ({why}); this run has "
        f"{num_iterations:,} (leave --preset out, or --set num_iterations={budget}, for the measured budget)"
    )
