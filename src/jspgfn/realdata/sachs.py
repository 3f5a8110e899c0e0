"""Sachs et al. (2005) flow cytometry data as a discretised, interventional dataset folder.

The paper (section 5.3, appendix "Learning biological structures from real data") uses N = 4,200
measurements of d = 11 phosphoproteins from 7 experimental conditions (600 per condition), discretised
into 3 levels as in Eaton & Murphy (2007), and evaluates the interventional NLL on held-out
interventions. Two sources are accepted:

1. cdt (the Causal Discovery Toolbox) ships the raw continuous table `cyto_full_data.csv`
   (7,466 rows x 11 proteins, no condition column). It is found through the installed package's files,
   without importing cdt (`pip install --no-deps cdt` is enough: it is only a data source). The table
   is the 9 conditions of Sachs et al. concatenated in the order of CONDITIONS, with the block sizes
   853, 902, 911, 723, 810, 799, 848, 913, 707 (the row counts of Sachs et al.'s 9 files). The
   condition labels are RECONSTRUCTED from these block sizes (the file has no condition column; a
   change-point fit found the same boundaries within 12 rows): `meta.json` says so.
2. bnlearn's `sachs.interventional.txt` (Scutari's discretised interventional data: space-separated
   levels 1..3 of the 11 proteins and an `INT` column, the 1-based column of the intervened protein,
   0 for none), when a user supplies it. Its levels come from Sachs et al.'s own discretisation; its
   conditions are identified by their intervention target (INT), since the file has no condition label.

Discretisation of the raw cdt table (3 levels: 0 low, 1 average, 2 high). Sachs et al. discretised
with an information-preserving method (Hartemink's, also used by bnlearn: `discretize(method =
"hartemink", breaks = 3, ibreaks = 60, idisc = "quantile")` on the observational data), which keeps
the pairwise mutual information; that procedure and its exact cut points are not reproduced here.
The rule used instead is simple and documented: per protein, the cut points are the 1/3 and 2/3
quantiles (tertiles) of the raw values in the observational conditions (cd3cd28 and icam2, all their
rows, before subsampling), and every row of every condition is coded as level = (x > c1) + (x > c2).
Observational rows are thus about evenly spread over the 3 levels, and an inhibition or activation
shows as a shift of the intervened protein (or its descendants) towards low or high. The cut points
are written to meta.json. For Sachs et al.'s own levels, pass bnlearn's file.

Sampling and split (both sources): a numpy Generator seeded by `seed` draws `rows_per_condition` rows
(default 600) without replacement from each cdt condition, in the order of CONDITIONS; 7 conditions
form the training data (observational and interventional, N = 4,200) and 2 interventional conditions
(default psitect -> PIP2 and u0126 -> Mek, whose targets are intervened on in no training condition)
form the test data, so the test NLL is on interventions unseen in training. `num_train` (e.g. 100)
then keeps a uniform subsample of the training rows, drawn by the same Generator. Rows stay grouped
by condition in the order of CONDITIONS; meta.json records the row range of each condition.

graph.csv holds the 17-arc Sachs network (bnlearn's model string for Sachs et al. 2005, Fig. 3A, the
network they validated from the literature), a REFERENCE for comparison, not a ground truth.

The module is the Sachs dataset's entry point: prepare_sachs, and the names of its parts (the study's facts
sachs_study.py, the dataset's assembly sachs_assemble.py, the two sources sachs_cdt.py and sachs_bnlearn.py),
so that `from jspgfn.realdata.sachs import ...` reaches all of them.
"""

from pathlib import Path

from jspgfn.dataset import write_dataset_folder
from jspgfn.realdata.sachs_assemble import (
    GENERATOR_VERSION,
    assemble,
    discretise,
    intervention_mask,
    sample_rows,
    split_blocks,
    tertile_cuts,
)
from jspgfn.realdata.sachs_bnlearn import (
    DEFAULT_TEST_TARGETS,
    read_bnlearn_interventional,
    sachs_from_bnlearn,
    write_bnlearn_format,
)
from jspgfn.realdata.sachs_cdt import (
    CDT_RELATIVE_PATH,
    CONDITION_LABEL_NOTE,
    DEFAULT_TEST_CONDITIONS,
    ROWS_PER_CONDITION,
    cdt_data_path,
    read_cdt_table,
    sachs_from_cdt,
)
from jspgfn.realdata.sachs_study import (
    ALIASES,
    CONDITIONS,
    GRAPH_NOTE,
    LEVELS,
    NAMES,
    NUM_LEVELS,
    REFERENCE_EDGES,
    Condition,
    column_order,
    reference_graph,
    reorder_columns,
)

__all__ = [
    "ALIASES",
    "CDT_RELATIVE_PATH",
    "CONDITIONS",
    "CONDITION_LABEL_NOTE",
    "DEFAULT_TEST_CONDITIONS",
    "DEFAULT_TEST_TARGETS",
    "GENERATOR_VERSION",
    "GRAPH_NOTE",
    "LEVELS",
    "NAMES",
    "NUM_LEVELS",
    "REFERENCE_EDGES",
    "ROWS_PER_CONDITION",
    "Condition",
    "assemble",
    "cdt_data_path",
    "column_order",
    "discretise",
    "intervention_mask",
    "prepare_sachs",
    "read_bnlearn_interventional",
    "read_cdt_table",
    "reference_graph",
    "reorder_columns",
    "sachs_from_bnlearn",
    "sachs_from_cdt",
    "sample_rows",
    "split_blocks",
    "tertile_cuts",
    "write_bnlearn_format",
]


def prepare_sachs(out, bnlearn_file=None, seed=0, num_train=None, **options):
    """Write the Sachs dataset folder `out` and return its path.

    From bnlearn's file when `bnlearn_file` is given (options: test_targets), else from cdt's raw table
    (options: rows_per_condition, test_conditions, path). `num_train` keeps a subsample of the training
    rows (the paper's N = 100 experiment). Nothing is written when the input is malformed.
    """
    if bnlearn_file is not None:
        dataset = sachs_from_bnlearn(bnlearn_file, seed=seed, num_train=num_train, **options)
    else:
        dataset = sachs_from_cdt(seed=seed, num_train=num_train, **options)
    write_dataset_folder(out, dataset)
    return Path(out)
