"""How methods are shown: the display name that the tidy tables record, in the paper's order."""

# The paper's order of its methods (Table D.1, Figure 2); a name not listed comes after them. Methods are
# ordered by display name, so a new id (dibs-er2, dibs-mlp: "DiBS"; mh-mc3-mlp: "MH-MC3"; ...) needs no entry.
PAPER_ORDER = [
    "MH-MC3",
    "Gibbs-MC3",
    "B-GES*",
    "B-PC*",
    "DiBS",
    "DiBS+",
    "BCD Nets",
    "VBG",
    "JSP-GFN (diag)",
    "JSP-GFN (full)",
    "JSP-GFN",  # Section 5.2 (jspgfn-mlp): the one JSP-GFN of Figures 3 and D.2
    "Exact (reference)",
]


def display_names(table):
    """{label: display name} of a tidy table (metrics.csv, features.csv, capabilities.csv); a table
    without a display_name column shows each label as it is."""
    if "display_name" not in table:
        return {label: label for label in table["label"]}
    return dict(zip(table["label"], table["display_name"].fillna(table["label"])))


def sort_labels(labels, names):
    """Labels in the paper's order of their display names `names` ({label: name}); others last, by name."""
    labels = list(dict.fromkeys(labels))

    def key(label):
        name = names.get(label, label)
        return (PAPER_ORDER.index(name) if name in PAPER_ORDER else len(PAPER_ORDER), name)

    return sorted(labels, key=key)
