"""Preparation of the paper's real data sets as dataset folders (see `jspgfn.dataset`).

sachs                       flow cytometry (Sachs et al., 2005), discretised into 3 levels, 9 conditions
gene_expression             single-cell counts with knockouts from the user's table
gene_expression_simulated   a SIMULATED sergio-rs stand-in of the same shape (true network known)
"""
