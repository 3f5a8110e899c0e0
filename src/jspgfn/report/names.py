"""How method ids are shown in tables and figures, in the paper's spelling and order."""

DISPLAY_NAMES = {
    "mh-mc3": "MH-MC3", "gibbs-mc3": "Gibbs-MC3", "b-ges": "B-GES*", "b-pc": "B-PC*", "dibs": "DiBS",
    "dibs-mixture": "DiBS+", "bcd-nets": "BCD Nets", "vbg": "VBG", "jspgfn-diag": "JSP-GFN (diag)",
    "jspgfn-full": "JSP-GFN (full)", "jspgfn-mlp": "JSP-GFN", "exact": "Exact (reference)",
}
ORDER = list(DISPLAY_NAMES)


def display_name(label):
    """Paper spelling of a method id; unknown ids are shown as they are."""
    return DISPLAY_NAMES.get(label, label)


def sort_labels(labels):
    """Method ids in the paper's order, unknown ids last (alphabetically)."""
    labels = list(dict.fromkeys(labels))
    return sorted(labels, key=lambda label: (ORDER.index(label) if label in ORDER else len(ORDER), label))
