"""Training presets (hyper-parameters) and the training configuration.

smoke: CI, a few seconds. quick: 6000 iterations, about 2 minutes per d=5 dataset on
2 CPU cores (edge RMSE ~0.02 against the exact posterior).
paper: the quick settings (measured here) run 5 times longer, 30,000 iterations (about 7
minutes per d=5 dataset on 2 cores, extrapolated from the quick preset's rate; not run here);
the released code's own budget (100k iterations, batch 32..256, lr 1e-5..1e-4) converged slowly
here (FACTS.md), so its settings are not copied.
Any field can be overridden (`jspgfn train --set key=value`).
"""

import dataclasses
import math

from jspgfn.errors import JspgfnError


@dataclasses.dataclass(frozen=True)
class TrainConfig:
    # budget
    num_iterations: int = 2000
    iterations_per_dispatch: int = 100  # lax.scan length (one jit call)
    checkpoint_every_seconds: float = 180.0
    # acting and replay (Algorithm 1)
    num_envs: int = 8  # environments stepped per iteration
    replay_capacity: int = 100_000
    replay_priority: float = (
        0.0  # alpha of prioritised replay by |residual| (0: uniform, the paper's), beyond the paper
    )
    prefill: int = 1000  # uniform acting steps before training
    # > 0: this share of every batch from the prefill's transitions, kept for the whole run; beyond the paper
    replay_anchor: float = 0.0
    # > 0: this share of every batch's states with one edge reversed (replay.reverse_one_edge); beyond the paper
    replay_reversal: float = 0.0
    # > 0: every this many iterations each environment's last graph makes backward_moves local moves by the
    # closed-form score and a uniformly random trajectory to the result goes into the replay (local_search.py);
    # linear Gaussian only, beyond the paper
    backward_every: int = 0
    backward_moves: int = 4
    # > 0 (with backward_every): those trajectories go to a buffer of their own (replay_capacity transitions) and
    # this share of every batch is drawn from it, so the replay keeps the sampler's transitions only and the dose
    # does not grow with the trajectories' length (with d); beyond the paper
    backward_batch: float = 0.0
    exploration_start: float = 1.0  # epsilon of epsilon-uniform acting at iteration 0
    exploration_end: float = 0.1
    exploration_fraction: float = 0.5  # epsilon reaches exploration_end after this share of the run
    # the first onpolicy_envs environments act with epsilon 0 throughout, as the sampler does; beyond the paper
    onpolicy_envs: int = 0
    # exploration (and the prefill) keep the policy's P(stop | G), a uniform edge otherwise; beyond the paper
    explore_policy_stop: bool = False
    # > 0: exploration draws edges by exp(closed-form score gain / T), the stop by 1; linear Gaussian only,
    # beyond the paper (score_exploration.py)
    explore_score_temperature: float = 0.0
    # < 1: that share of the exploratory actions by the score gains, the rest uniform; beyond the paper
    explore_score_share: float = 1.0
    # not None: the share moves linearly from explore_score_share to this value as epsilon falls (over the
    # first exploration_fraction of the run), then stays; beyond the paper
    explore_score_share_end: float | None = None
    # objective
    batch_size: int = 128  # transitions per update
    num_theta_samples: int = 4  # S (S x S pairs per transition)
    minibatch_rows: int | None = None  # M rows of data per update (None: all N)
    residual_scale: float = 1.0
    huber_delta: float = 1.0
    penalty: float = 0.0
    theta_elbo: float = 0.0  # auxiliary ELBO term on q(theta | G), beyond the paper (loss.elbo_term)
    trajectory_balance: float = (
        0.0  # weight of the whole-trajectory SubTB term, beyond the paper (loss.trajectory_loss)
    )
    trajectory_batch: int = 4  # trajectories per update for that term
    trajectory_lambda: float = 1.0  # SubTB(lambda): a sub-trajectory of n transitions weighs lambda ** (n - 1)
    trajectory_capacity: int = 1000  # finished trajectories kept for it (the most recent)
    stop_target_tau: float = 0.0  # > 0: log P(stop | G') from a Polyak-averaged network, beyond the paper
    stop_target_after: float = 0.0  # that target only after this share of the run (the paper's loss before)
    stop_target_until: float = 1.0  # and only before this share (the paper's loss after; 1: to the end)
    # > 0: the stop logit plus this weight times JSP-GFN's own score of G (score_offset.py), beyond the paper
    stop_score_offset: float = 0.0
    # with stop_score_offset: the offset from the closed-form log P(D | G) + log P(G), not q's; beyond the paper
    stop_score_closed_form: bool = False
    # the exact policy at the states one edge short of the complete DAG (last_step.py); beyond the paper
    last_step_closed_form: bool = False
    noise_pool: int = 4  # theta noise from a shared pool of 4*S draws with random signs (0: i.i.d.)
    # theta_s, theta'_s share their noise: the pairs (s, s) train the structure (beyond the paper)
    shared_theta_noise: bool = False
    max_parents: int | None = None
    # optimiser
    learning_rate: float = 1e-3
    warmup: int = 100
    end_learning_rate_factor: float = 0.05  # cosine decay to lr * factor
    grad_clip: float = 10.0
    # network
    embed_dim: int = 128
    mlp_hidden: int = 128
    num_heads: int = 4
    key_size: int = 32
    theta_hidden: int = 128
    init_scale: float = 0.1
    ffn: bool = True
    theta_layers: int = 2
    logit_scale: float = 1.0  # multiplies the stop and edge logits (the released code uses N, the data size)
    stop_bias: float = 0.0  # on the stop logit: P(stop) starts near sigmoid(logit_scale * stop_bias); beyond the paper
    stop_count_scale: float = 0.0  # > 0: a learned stop level per edge count, times this; beyond the paper
    stop_node_sum: bool = False  # the stop logit also sums a head over the nodes' states; beyond the paper
    # model
    graph_prior: str = "uniform"

    def replace(self, **kwargs):
        for key, value in kwargs.items():
            problem = option_problem(key, value)
            if problem is not None:
                raise JspgfnError(f"training option {key}: {problem}")
        new = dataclasses.replace(self, **kwargs)
        if new.stop_target_until < 1.0 and new.stop_target_until <= new.stop_target_after:
            raise JspgfnError(
                "training option stop_target_until must be above stop_target_after (else the target is never used)"
            )
        if new.replay_anchor > 0:
            if not 0 < new.anchor_batch < new.batch_size:
                raise JspgfnError(
                    f"training option replay_anchor {new.replay_anchor} takes {new.anchor_batch} of a batch of "
                    f"{new.batch_size}: it must leave at least one transition to each buffer"
                )
            if new.prefill == 0 or new.replay_priority > 0:
                raise JspgfnError("training option replay_anchor needs prefill > 0 and replay_priority 0")
        if new.backward_batch > 0:
            if new.backward_every == 0:
                raise JspgfnError("training option backward_batch needs backward_every > 0 (its trajectories)")
            if not 0 < new.backward_share_of_batch < new.batch_size:
                raise JspgfnError(
                    f"training option backward_batch {new.backward_batch} takes {new.backward_share_of_batch} of a "
                    f"batch of {new.batch_size}: it must leave at least one transition to each buffer"
                )
            if new.replay_anchor > 0:
                raise JspgfnError("training options backward_batch and replay_anchor exclude each other")
        if new.backward_every > 0 and new.replay_priority > 0:
            raise JspgfnError(
                "training option backward_every needs replay_priority 0 (its transitions have no priority)"
            )
        if new.explore_score_temperature > 0 and new.explore_policy_stop:
            raise JspgfnError("training options explore_score_temperature and explore_policy_stop exclude each other")
        if new.explore_score_temperature == 0:
            mixing = {
                "explore_score_share < 1": new.explore_score_share < 1,
                "explore_score_share_end": new.explore_score_share_end is not None,
            }
            for name, on in mixing.items():
                if on:
                    raise JspgfnError(
                        f"training option {name} needs explore_score_temperature > 0 (without it every exploratory "
                        "action is uniform)"
                    )
        if new.onpolicy_envs > new.num_envs:
            raise JspgfnError(f"training option onpolicy_envs {new.onpolicy_envs} is more than num_envs {new.num_envs}")
        if new.stop_score_closed_form and new.stop_score_offset == 0:
            raise JspgfnError("training option stop_score_closed_form needs stop_score_offset > 0 (its weight)")
        if new.shared_theta_noise and new.num_theta_samples < 2:
            raise JspgfnError(
                "training option shared_theta_noise needs num_theta_samples >= 2 (q learns from pairs s != t)"
            )
        return new

    @property
    def backward_share_of_batch(self):
        """Transitions per batch drawn from the backward trajectories' buffer (backward_batch): 0 when it is off."""
        return round(self.backward_batch * self.batch_size)

    @property
    def anchor_batch(self):
        """Transitions per batch drawn from the kept prefill (replay_anchor): 0 when it is off."""
        return round(self.replay_anchor * self.batch_size)

    def to_dict(self):
        return dataclasses.asdict(self)


_TYPES = {
    int: (int,),
    float: (int, float),
    bool: (bool,),
    str: (str,),
    int | None: (int, type(None)),
    float | None: (int, float, type(None)),
}

# Allowed values beyond the type: (test, what the value must be). None (for the options that may be None) is always
# allowed.
_POSITIVE = (lambda v: v > 0, "> 0")
_NON_NEGATIVE = (lambda v: v >= 0, ">= 0")
_UNIT = (lambda v: 0 <= v <= 1, "in [0, 1]")
_RANGES = {
    **dict.fromkeys(
        (
            "num_iterations",
            "iterations_per_dispatch",
            "num_envs",
            "batch_size",
            "num_theta_samples",
            "replay_capacity",
            "embed_dim",
            "mlp_hidden",
            "num_heads",
            "key_size",
            "theta_hidden",
            "theta_layers",
            "minibatch_rows",
            "max_parents",
            "learning_rate",
            "huber_delta",
            "grad_clip",
            "init_scale",
            "residual_scale",
            "logit_scale",
            "trajectory_batch",
            "trajectory_capacity",
        ),
        _POSITIVE,
    ),
    **dict.fromkeys(
        (
            "prefill",
            "onpolicy_envs",
            "warmup",
            "noise_pool",
            "penalty",
            "theta_elbo",
            "trajectory_balance",
            "trajectory_lambda",
            "replay_priority",
            "checkpoint_every_seconds",
            "stop_count_scale",
            "stop_score_offset",
            "explore_score_temperature",
            "backward_every",
            "backward_moves",
        ),
        _NON_NEGATIVE,
    ),
    **dict.fromkeys(
        (
            "stop_target_tau",
            "stop_target_after",
            "replay_anchor",
            "replay_reversal",
            "backward_batch",
            "explore_score_share",
            "explore_score_share_end",
            "stop_target_until",
            "exploration_start",
            "exploration_end",
            "exploration_fraction",
            "end_learning_rate_factor",
        ),
        _UNIT,
    ),
}


def option_problem(key, value):
    """None if `value` fits training option `key` (its type in TrainConfig and its range), else the problem
    (one line). Numbers must be finite: NaN and infinities are refused for every option."""
    fields = {field.name: field for field in dataclasses.fields(TrainConfig)}
    if key not in fields:
        return f"unknown training option (valid: {', '.join(sorted(fields))})"
    accepted = _TYPES[fields[key].type]
    if not isinstance(value, accepted) or (isinstance(value, bool) and bool not in accepted):
        names = " or ".join("null" if kind is type(None) else kind.__name__ for kind in accepted)
        return f"{value!r} is not of type {names}"
    if value is None or isinstance(value, (bool, str)):
        if key == "graph_prior":
            from jspgfn.models.graph_prior import GRAPH_PRIORS

            if value not in GRAPH_PRIORS:
                return f"unknown graph prior {value!r} (choose one of {', '.join(GRAPH_PRIORS)})"
        return None
    if not math.isfinite(value):
        return f"{value!r} is not a finite number"
    if key in _RANGES:
        test, what = _RANGES[key]
        if not test(value):
            return f"{value!r} must be {what}"
    return None


PRESETS = {
    "smoke": TrainConfig(
        num_iterations=60,
        iterations_per_dispatch=20,
        prefill=50,
        num_envs=4,
        batch_size=16,
        num_theta_samples=2,
        replay_capacity=2000,
        embed_dim=32,
        mlp_hidden=32,
        theta_hidden=32,
        num_heads=2,
        key_size=16,
        warmup=10,
    ),
    "quick": TrainConfig(num_iterations=6000),
    "paper": TrainConfig(num_iterations=30_000, iterations_per_dispatch=500, warmup=500),
}


# the preset of a run that names none (`jspgfn train` without --preset, jspgfn.fit)
DEFAULT_PRESET = "quick"


def get_preset(name, **overrides):
    if name not in PRESETS:
        raise JspgfnError(f"unknown preset '{name}': choose one of {', '.join(PRESETS)}")
    return PRESETS[name].replace(**overrides)
