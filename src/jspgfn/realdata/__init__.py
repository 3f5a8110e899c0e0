"""Preparation of the paper's real data sets as dataset folders (see `jspgfn.dataset`).

sachs   flow cytometry (Sachs et al., 2005), discretised into 3 levels, 9 conditions (`realdata.sachs`)
gene_expression   single-cell counts with knockouts: a user's table or a sergio-rs stand-in (`realdata.gene_expression`)
"""
