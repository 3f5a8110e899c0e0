"""Preparation of the paper's real data sets as dataset folders (see `jspgfn.dataset`).

sachs                       flow cytometry (Sachs et al., 2005), discretised into 3 levels, 9 conditions:
                            prepare_sachs and the names of its parts, which are
  sachs_study               the 11 proteins, 3 levels, 9 conditions and the 17-arc reference network
  sachs_assemble            level codes, intervention masks, the split by condition, meta.json
  sachs_cdt                 source 1: cdt's raw table (condition blocks reconstructed from their sizes)
  sachs_bnlearn             source 2: bnlearn's discretised sachs.interventional.txt (read and write)
gene_expression             single-cell counts with knockouts from the user's table
gene_expression_simulated   a SIMULATED sergio-rs stand-in of the same shape (true network known)
"""
