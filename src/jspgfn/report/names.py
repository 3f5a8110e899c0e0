"""How methods are shown: the display name that the tidy tables record, in the method registry's order."""

import functools


@functools.cache
def paper_order():
    """Display names in the order of the method registry's `order` keys (the paper's order: Table D.1,
    Figure 2; jspgfn.registry), or none when no registry is found. A name without one comes after them,
    so a new id of a known method (dibs-er2, dibs-mlp: "DiBS"; mh-mc3-mlp: "MH-MC3") needs no entry."""
    from jspgfn.registry import display_order, find_root, load_registry

    return display_order(load_registry()) if find_root() is not None else []


def display_names(table):
    """{label: display name} of a tidy table (metrics.csv, features.csv, capabilities.csv); a table
    without a display_name column shows each label as it is."""
    if "display_name" not in table:
        return {label: label for label in table["label"]}
    return dict(zip(table["label"], table["display_name"].fillna(table["label"])))


def sort_labels(labels, names):
    """Labels in the registry's order of their display names `names` ({label: name}); others last, by name."""
    labels = list(dict.fromkeys(labels))
    order = paper_order()

    def key(label):
        name = names.get(label, label)
        return (order.index(name) if name in order else len(order), name)

    return sorted(labels, key=key)
