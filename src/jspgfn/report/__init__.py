"""Tables and figures of the paper, drawn from the aggregated tidy tables only (never raw runs):
metrics.csv, features.csv and capabilities.csv.

summary.py  mean and 95% confidence interval per method
names.py    display names recorded in the tables, in the paper's order of methods
tables.py   Table D.1 and Table A.1, written as CSV, LaTeX and PDF
figures.py  Figure 2 and Figure D.1 (seaborn), written as PDF and PNG
"""
