"""What Sachs et al. (2005) measured: the 11 proteins (their names and the column names that denote them),
the 3 levels, the 9 experimental conditions with their intervention targets, and the 17-arc reference
network. Facts of the study only: the files are read by sachs_cdt.py and sachs_bnlearn.py (sachs.py).
"""

import dataclasses

import numpy as np

from jspgfn.errors import DataError

NAMES = ("Raf", "Mek", "Plcg", "PIP2", "PIP3", "Erk", "Akt", "PKA", "PKC", "P38", "Jnk")
# Accepted column names (lower case) for each variable: Sachs et al.'s / cdt's, bnlearn's, and NAMES.
ALIASES = (
    ("raf", "praf"),
    ("mek", "pmek"),
    ("plcg", "plc", "plcgamma"),
    ("pip2",),
    ("pip3",),
    ("erk", "p44/42", "p44.42", "p44_42"),
    ("akt", "pakts473"),
    ("pka",),
    ("pkc",),
    ("p38",),
    ("jnk", "pjnk"),
)
LEVELS = ("low", "average", "high")
NUM_LEVELS = len(LEVELS)
GRAPH_NOTE = (
    "REFERENCE, not a ground truth: the 17-arc Sachs network (Sachs et al. 2005, Fig. 3A, as bnlearn's "
    "model string [PKC][PKA|PKC][Raf|PKC:PKA][Mek|PKC:PKA:Raf][Erk|Mek:PKA][Akt|Erk:PKA][P38|PKC:PKA]"
    "[Jnk|PKC:PKA][Plcg][PIP3|Plcg][PIP2|Plcg:PIP3]); the true signalling network is not known"
)


@dataclasses.dataclass(frozen=True)
class Condition:
    """One experimental condition of Sachs et al. (2005).

    label: short name (as in their file names); reagents: what the cells received; size: rows in cdt's
    table; targets: the intervened variables (names in NAMES), () for none; effect: 'inhibition',
    'activation' or 'none'; source: where the target comes from.
    """

    label: str
    reagents: str
    size: int
    targets: tuple
    effect: str
    source: str


# Intervention targets. Sachs et al. (2005), Science 308:523, Fig. 2 / table of reagents: the general
# stimulation anti-CD3 + anti-CD28 (with or without ICAM-2) targets no measured protein; each specific
# reagent inhibits or activates one protein. Eaton & Murphy (2007, AISTATS, "Exact Bayesian structure
# learning from uncertain interventions", Table 1 / Fig. 5) model the same 9 conditions with these
# targets, and bnlearn's sachs.interventional.txt (Scutari) codes them in its INT column.
CONDITIONS = (
    # Sachs et al. 2005: general stimulation of the T-cell receptor, no specific target.
    Condition("cd3cd28", "anti-CD3 + anti-CD28", 853, (), "none", "Sachs et al. 2005 (general stimulus)"),
    # Sachs et al. 2005: ICAM-2 added to the general stimulation (LFA-1 co-stimulus), no specific target.
    Condition("icam2", "anti-CD3 + anti-CD28 + ICAM-2", 902, (), "none", "Sachs et al. 2005 (general stimulus)"),
    # Sachs et al. 2005: AKT inhibitor -> Akt; Eaton & Murphy 2007 and bnlearn INT: Akt.
    Condition("aktinhib", "anti-CD3/CD28 + AKT inhibitor", 911, ("Akt",), "inhibition", "Sachs et al. 2005"),
    # Sachs et al. 2005: G06976 inhibits PKC; Eaton & Murphy 2007 and bnlearn INT: PKC.
    Condition("g0076", "anti-CD3/CD28 + G06976", 723, ("PKC",), "inhibition", "Sachs et al. 2005"),
    # Sachs et al. 2005: psitectorigenin inhibits PIP2; Eaton & Murphy 2007 and bnlearn INT: PIP2.
    Condition("psitect", "anti-CD3/CD28 + psitectorigenin", 810, ("PIP2",), "inhibition", "Sachs et al. 2005"),
    # Sachs et al. 2005: U0126 inhibits MEK; Eaton & Murphy 2007 and bnlearn INT: Mek.
    Condition("u0126", "anti-CD3/CD28 + U0126", 799, ("Mek",), "inhibition", "Sachs et al. 2005"),
    # Sachs et al. 2005: LY294002 inhibits PI3K (not measured), blocking Akt phosphorylation; coded as an
    # intervention on Akt (as bnlearn's INT column and Eaton & Murphy 2007 do). Some works use PIP3 instead.
    Condition("ly", "anti-CD3/CD28 + LY294002", 848, ("Akt",), "inhibition", "Sachs et al. 2005 (PI3K -> Akt)"),
    # Sachs et al. 2005: PMA activates PKC; Eaton & Murphy 2007 and bnlearn INT: PKC.
    Condition("pma", "PMA", 913, ("PKC",), "activation", "Sachs et al. 2005"),
    # Sachs et al. 2005: beta2cAMP activates PKA; Eaton & Murphy 2007 and bnlearn INT: PKA.
    Condition("b2camp", "beta2cAMP", 707, ("PKA",), "activation", "Sachs et al. 2005"),
)
# The 17 arcs of the reference network (Sachs et al. 2005, Fig. 3A; bnlearn's Sachs model string).
REFERENCE_EDGES = (
    ("PKC", "PKA"),
    ("PKC", "Raf"),
    ("PKA", "Raf"),
    ("PKC", "Mek"),
    ("PKA", "Mek"),
    ("Raf", "Mek"),
    ("Mek", "Erk"),
    ("PKA", "Erk"),
    ("Erk", "Akt"),
    ("PKA", "Akt"),
    ("PKC", "P38"),
    ("PKA", "P38"),
    ("PKC", "Jnk"),
    ("PKA", "Jnk"),
    ("Plcg", "PIP3"),
    ("Plcg", "PIP2"),
    ("PIP3", "PIP2"),
)


def reference_graph():
    """The 17-arc reference network as uint8 [11, 11] in the order of NAMES ([i, j] = 1: i -> j)."""
    graph = np.zeros((len(NAMES), len(NAMES)), dtype=np.uint8)
    for parent, child in REFERENCE_EDGES:
        graph[NAMES.index(parent), NAMES.index(child)] = 1
    return graph


def column_order(header, source):
    """Index into NAMES of each header name: tuple [11]. Raises DataError(source, ...) unless the header
    names each of the 11 proteins exactly once (any accepted alias, any case, any order)."""
    order = []
    for name in header:
        key = name.strip().strip('"').lower()
        matches = [v for v, aliases in enumerate(ALIASES) if key in aliases]
        if not matches:
            raise DataError(source, f"unknown column '{name}': expected the 11 Sachs proteins {', '.join(NAMES)}")
        order.append(matches[0])
    missing = [NAMES[v] for v in range(len(NAMES)) if v not in order]
    repeated = sorted({NAMES[v] for v in order if order.count(v) > 1})
    if missing or repeated:
        problem = f"missing {', '.join(missing)}" if missing else f"{', '.join(repeated)} named twice"
        raise DataError(source, f"header must name each of the 11 Sachs proteins once ({problem})")
    return tuple(order)


def reorder_columns(values, order):
    """values [N, 11] in file order -> [N, 11] in the order of NAMES (order from column_order)."""
    out = np.empty_like(values)
    out[:, list(order)] = values
    return out
