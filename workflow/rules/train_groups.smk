# Training groups (an experiment's train_group_size): which datasets one `jspgfn train DATA... --out
# RUN...` job trains, and what marks a dataset as trained. Functions only; the rules are in jspgfn.smk.


def train_groups(eid):
    """The dataset ids of experiment `eid` in training groups of its train_group_size: {group id: ids},
    the group id '{first}-{last}' (in order; the last group may be smaller)."""
    ids, size = dataset_ids(eid), config["experiments"][eid]["train_group_size"]
    groups = [ids[i : i + size] for i in range(0, len(ids), size)]
    return {f"{group[0]}-{group[-1]}": group for group in groups}


def trained_marker(wildcards):
    """What marks dataset `wildcards.dataset` as trained: its run's `done`, or its group's marker."""
    base = f"{RESULTS}/{wildcards.experiment}/runs/{wildcards.method}"
    if config["experiments"][wildcards.experiment]["train_group_size"] > 1:
        for group, ids in train_groups(wildcards.experiment).items():
            if wildcards.dataset in ids:
                return f"{base}/group-{group}.done"
    return f"{base}/{wildcards.dataset}/done"


def group_datasets(wildcards):
    groups = train_groups(wildcards.experiment)
    if wildcards.group not in groups:
        raise ValueError(
            f"experiment {wildcards.experiment} has no training group {wildcards.group} (its groups: "
            f"{', '.join(groups)})"
        )
    return groups[wildcards.group]
