"""Tables and figures of the paper, drawn from the aggregated tidy tables only (never raw runs).

summary.py  mean and 95% confidence interval per method
names.py    display names of method ids ("b-pc" -> "B-PC*")
tables.py   Table D.1 and Table A.1, written as CSV, LaTeX and PDF
figures.py  Figure 2 and Figure D.1 (seaborn), written as PDF and PNG
"""
