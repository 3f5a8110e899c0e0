"""Shared by the released-code benchmarks (run with the OLD venv, benchmarks/released/setup.sh): the paper's
released classes (tristandeleu/jax-jsp-gfn, commit d53b3b6) built and stepped exactly as its train.py does,
on a data array instead of a W&B artifact."""

import inspect
import sys
import textwrap

_UNGUARDED = "self.num_samples * jnp.sum(dist.mask, axis=(1, 2))"
_GUARDED = "self.num_samples * jnp.maximum(1., jnp.sum(dist.mask, axis=(1, 2)))"


def guard_empty_graph(gflownet_module):
    """Re-define DAGGFlowNet.get_state with its length-2 penalty's denominator max(1, #edges): as released
    it is 0/0 on the empty graph, and the NaN freezes training (FACTS.md)."""
    source = textwrap.dedent(inspect.getsource(gflownet_module.DAGGFlowNet.get_state))
    if source.count(_UNGUARDED) != 1:
        raise RuntimeError("the released get_state is not the expected one (commit d53b3b6)")
    namespace = {}
    exec(source.replace(_UNGUARDED, _GUARDED), vars(gflownet_module), namespace)
    gflownet_module.DAGGFlowNet.get_state = namespace["get_state"]


class ReleasedRun:
    """One training run of the released code: `step(update)` is one iteration of its train.py loop
    (act with epsilon from its schedule, env step, replay add, then with `update` replay sample and one
    gflownet.step), `sample(n)` its posterior_estimate (adjacency matrices [n, d, d])."""

    def __init__(self, src, x, *, model, batch_size, theta_samples, lr, num_envs, prefill, num_iterations,
                 min_exploration, obs_scale, seed, guard):  # fmt: skip
        sys.path.insert(0, src)
        import jax
        import jax.numpy as jnp
        import numpy as np
        import optax
        from dag_gflownet import gflownet as gflownet_module
        from dag_gflownet.env import GFlowNetDAGEnv
        from dag_gflownet.models.priors import UniformPrior
        from dag_gflownet.utils.data import Dataset
        from dag_gflownet.utils.factories import get_model
        from dag_gflownet.utils.gflownet import posterior_estimate
        from dag_gflownet.utils.jraph_utils import to_graphs_tuple
        from dag_gflownet.utils.replay_buffer import ReplayBuffer

        if guard:
            guard_empty_graph(gflownet_module)
        self._jax, self._np, self._to_graphs_tuple = jax, np, to_graphs_tuple
        self._posterior_estimate, self._env_class = posterior_estimate, GFlowNetDAGEnv
        self.batch_size, self.num_envs, self.num_variables = batch_size, num_envs, x.shape[1]
        self.train = Dataset(data=jnp.asarray(x), interventions=jnp.zeros_like(jnp.asarray(x)))
        self.rng = np.random.default_rng(seed)
        self.key, subkey = jax.random.split(jax.random.PRNGKey(seed))
        self.env = GFlowNetDAGEnv(num_envs=num_envs, num_variables=x.shape[1], max_parents=None)
        self.replay = ReplayBuffer(100_000, num_variables=x.shape[1])
        self.gflownet = gflownet_module.DAGGFlowNet(
            model=get_model(model, UniformPrior(), self.train, obs_scale),
            delta=1.0,
            num_samples=theta_samples,
            update_target_every=0,
            dataset_size=x.shape[0],
            batch_size=None,
        )
        self.params, self.state = self.gflownet.init(
            subkey, optax.adam(lr), self.replay.dummy["graph"], self.replay.dummy["mask"]
        )
        self.exploration_schedule = jax.jit(
            optax.linear_schedule(
                init_value=jnp.array(0.0),
                end_value=jnp.array(1.0 - min_exploration),
                transition_steps=num_iterations // 2,
                transition_begin=prefill,
            )
        )
        self.normalization = jnp.array(x.shape[0])
        self.observations, self.indices, self.iteration = self.env.reset(), None, 0

    def step(self, update):
        epsilon = self.exploration_schedule(self.iteration)
        observations = self.observations
        observations["graph"] = self._to_graphs_tuple(observations["adjacency"])
        actions, self.key, logs = self.gflownet.act(
            self.params.online, self.key, observations, epsilon, self.normalization
        )
        next_observations, delta_scores, dones, _ = self.env.step(self._np.asarray(actions))
        self.indices = self.replay.add(
            observations,
            actions,
            logs["is_exploration"],
            next_observations,
            delta_scores,
            dones,
            prev_indices=self.indices,
        )
        self.observations = next_observations
        if update:
            samples = self.replay.sample(batch_size=self.batch_size, rng=self.rng)
            self.params, self.state, logs = self.gflownet.step(
                self.params, self.state, samples, self.train, self.normalization
            )
            float(logs["loss"])  # train.py formats the loss for its progress bar every iteration
        self.iteration += 1

    def sample(self, num_samples):
        self.key, subkey = self._jax.random.split(self.key)
        env = self._env_class(num_envs=self.num_envs, num_variables=self.num_variables, max_parents=None)
        graphs, _ = self._posterior_estimate(
            self.gflownet, self.params.online, env, subkey, self.train, num_samples=num_samples, verbose=False
        )
        return graphs
