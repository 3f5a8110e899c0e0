"""Posterior: PosteriorSamples (samples.py, the one npz format) with the questions a person asks of them.

    posterior = Posterior.load("samples.npz")       # or jspgfn.fit(...).sample(n), jspgfn.baseline(...)
    posterior.edge_marginals()   DataFrame [d, d]: P(parent -> child), rows = parent, columns = child
    posterior.top_graphs(k)      DataFrame [<= k rows]: the most probable graphs, their probability and count
    posterior.theta_summary()    DataFrame: per edge, P(edge) and the weight's mean and sd given the edge
    posterior.to_networkx(i)     networkx.DiGraph of sample i (networkx, if installed)
    posterior.log_prob_terminating   float [K] (JSP-GFN sampled with log_pt=True) or None
    posterior.save("samples.npz")

Probabilities are weighted by the samples' normalised weights (`PosteriorSamples.weights`): frequencies for
equally weighted samples. Variables are named by the metadata's `variable_names`, the data's column names
(X1..Xd when the samples record none).
"""

import dataclasses

import numpy as np

from jspgfn.errors import DataError, JspgfnError
from jspgfn.features import edge_features
from jspgfn.samples import PosteriorSamples, load_samples, save_samples


def default_names(num_variables):
    """The names of d unnamed variables (columns of an array): ('X1', ..., 'Xd')."""
    return tuple(f"X{i + 1}" for i in range(num_variables))


@dataclasses.dataclass
class Posterior(PosteriorSamples):
    """K posterior samples (G, theta) over d variables: graphs uint8 [K, d, d] (graphs[k, i, j] = 1 means
    i -> j), theta (linear models: float [K, d, d], the weight of i -> j; others: [K, P]), optional
    log_weights [K], metadata and extra arrays."""

    @classmethod
    def load(cls, path):
        """The Posterior of a PosteriorSamples .npz file (DataError naming the file when it is not one)."""
        return cls.of(load_samples(path))

    @classmethod
    def of(cls, samples):
        """The Posterior of PosteriorSamples (the same arrays, not copied)."""
        return cls(**{field.name: getattr(samples, field.name) for field in dataclasses.fields(samples)})

    def save(self, path):
        """Write the PosteriorSamples .npz (samples.save_samples: validated, atomic)."""
        save_samples(path, self)

    @property
    def names(self):
        """The d variable names: metadata['variable_names'], else X1..Xd."""
        names = self.metadata.get("variable_names")
        if names is None:
            return default_names(self.num_variables)
        if len(names) != self.num_variables:
            raise DataError("samples", f"metadata names {len(names)} variables, the graphs have {self.num_variables}")
        return tuple(str(name) for name in names)

    @property
    def log_prob_terminating(self):
        """float [K]: the estimate of log P_T(G, theta) of each sample (`sample(..., log_pt=True)`), or None."""
        return self.extras.get("log_prob_terminating")

    def edge_marginals(self):
        """DataFrame [d, d] of P(i -> j): index = parent i, columns = child j, both the variable names."""
        import pandas as pd

        names = pd.Index(self.names)
        return pd.DataFrame(
            edge_features(self.graphs, self.weights()), index=names.rename("parent"), columns=names.rename("child")
        )

    def top_graphs(self, k=5):
        """The k most probable distinct graphs (fewer when fewer were sampled), most probable first.

        DataFrame with one row per graph: `probability` (summed sample weight: the frequency for equally
        weighted samples), `count` (samples), `edges` (tuple of (parent, child) names), `graph` (uint8
        [d, d] adjacency).
        """
        import pandas as pd

        unique, inverse = np.unique(self.graphs.reshape(self.num_samples, -1), axis=0, return_inverse=True)
        inverse = inverse.reshape(-1)
        probability = np.bincount(inverse, weights=self.weights(), minlength=len(unique))
        count = np.bincount(inverse, minlength=len(unique))
        order = np.argsort(-probability, kind="stable")[:k]
        d, names = self.num_variables, self.names
        graphs = [unique[u].reshape(d, d).astype(np.uint8) for u in order]
        return pd.DataFrame(
            {
                "probability": probability[order],
                "count": count[order],
                "edges": [tuple((names[i], names[j]) for i, j in zip(*np.nonzero(g))) for g in graphs],
                "graph": graphs,
            }
        )

    def theta_summary(self):
        """Per edge sampled at least once, most probable first: DataFrame with `parent`, `child`,
        `probability` (P(parent -> child)) and the weighted `mean` and `sd` of its weight theta[k, i, j] over
        the samples that have the edge. Linear models only (theta [K, d, d]); JspgfnError otherwise."""
        import pandas as pd

        k, d = self.num_samples, self.num_variables
        if self.theta.shape != (k, d, d):
            raise JspgfnError(
                f"theta_summary needs a weight per edge (theta [K, d, d] of a linear model); model "
                f"'{self.metadata.get('model')}' has theta of shape {self.theta.shape}"
            )
        present, weights = self.graphs.astype(bool), self.weights()
        mass = np.einsum("k,kij->ij", weights, present)
        parents, children = np.nonzero(mass > 0)
        rows = []
        for i, j in zip(parents, children):
            w = weights[present[:, i, j]]
            values = self.theta[present[:, i, j], i, j]
            mean = np.average(values, weights=w)
            rows.append((mean, np.sqrt(np.average((values - mean) ** 2, weights=w))))
        names = self.names
        table = pd.DataFrame(
            {
                "parent": [names[i] for i in parents],
                "child": [names[j] for j in children],
                "probability": mass[parents, children],
                "mean": [row[0] for row in rows],
                "sd": [row[1] for row in rows],
            }
        )
        return table.sort_values("probability", ascending=False, kind="stable", ignore_index=True)

    def to_networkx(self, i):
        """networkx.DiGraph of sample i: nodes = the variable names, an edge per parent -> child, with
        attribute `weight` = theta[i, parent, child] for linear models. Needs networkx (JspgfnError if absent)."""
        try:
            import networkx as nx
        except ImportError:
            raise JspgfnError("to_networkx needs networkx, which is not installed: pip install networkx") from None
        if not -self.num_samples <= i < self.num_samples:
            raise JspgfnError(f"sample {i} out of range: there are {self.num_samples} samples")
        names, graph = self.names, self.graphs[i]
        linear = self.theta.shape[1:] == graph.shape
        g = nx.DiGraph()
        g.add_nodes_from(names)
        for p, c in zip(*np.nonzero(graph)):
            g.add_edge(names[p], names[c], **({"weight": float(self.theta[i, p, c])} if linear else {}))
        return g
