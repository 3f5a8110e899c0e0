"""Tables and figures of the paper, drawn from the aggregated tidy tables only (never raw runs):
metrics.csv, features.csv, log_pt.csv and capabilities.csv.

summary.py  mean and 95% confidence interval per method, inside each metric's range (the one interval)
names.py    display names recorded in the tables, in the paper's order of methods
tables.py   Table D.1, Table A.1 and the log P_T slopes (Figure 3c), written as CSV, LaTeX and PDF
figures.py  Figures 2, 3 and D.1, D.2 (seaborn), written as PDF and PNG

posterior_report.py is the one module that reads a run's files rather than the tidy tables: `jspgfn report
posterior`, one samples file (with its data and, optionally, its run folder) as a self-contained HTML page for
a user, not a figure of the paper. Its numbers come from evaluate and Posterior; it draws with figures.py
and posterior_figures.py (the graphs, weight histograms and training curve), writes its HTML with
html_page.py and reads the graph label and training log with posterior_inputs.py.
"""
