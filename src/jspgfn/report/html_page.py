"""The HTML of the posterior page (posterior_report.py): its style, escaped text, tables, sections, and
figures embedded as base64 PNGs. Every function returns an HTML fragment (a str); nothing here reads data.
"""

import base64
import html
import io
import re

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

PAGE_WIDTH = 1100  # pixels: the container's max-width
DPI = 100  # a figure of w inches is w * DPI pixels wide: figures here stay within PAGE_WIDTH

STYLE = f"""
*, *::before, *::after {{ box-sizing: border-box; }}
body {{ margin: 0; font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1d1d1f;
  background: #fafafa; line-height: 1.45; overflow-wrap: anywhere; }}
main {{ max-width: {PAGE_WIDTH}px; margin: 0 auto; padding: 16px 24px 40px; background: #fff; }}
h1 {{ font-size: 1.5rem; margin: 0.4em 0; }}
h2 {{ font-size: 1.2rem; margin: 1.6em 0 0.5em; border-bottom: 1px solid #ddd; padding-bottom: 0.2em; }}
img {{ display: block; max-width: 100%; height: auto; margin: 0.6em 0; }}
table {{ border-collapse: collapse; margin: 0.5em 0; font-size: 0.92rem; max-width: 100%; }}
th, td {{ border: 1px solid #ddd; padding: 3px 8px; text-align: left; vertical-align: top; }}
th {{ background: #f2f2f2; }}
td.number {{ text-align: right; font-variant-numeric: tabular-nums; }}
.absent {{ color: #555; font-style: italic; }}
.note {{ color: #555; font-size: 0.9rem; }}
code {{ font-size: 0.9em; background: #f2f2f2; padding: 0 3px; }}
"""


def escape(value):
    """Escaped text."""
    return html.escape(str(value), quote=True)


def fmt_number(value, digits=4):
    """A metric as text: '–' for None, else `digits` significant digits."""
    if value is None:
        return "–"
    return f"{value:.{digits}g}" if isinstance(value, float) else str(value)


def figure_image(fig, alt, dpi=DPI):
    """`<img>` of the figure as an embedded base64 PNG (`dpi` dots per inch); closes the figure."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight")
    plt.close(fig)
    data = base64.b64encode(buffer.getvalue()).decode("ascii")
    return f'<img src="data:image/png;base64,{data}" alt="{escape(alt)}">'


def plural(number, noun):
    """'1 edge', '3 edges'."""
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def html_table(header, rows, numeric=()):
    """An HTML table: header [C] strings (None: no header row), rows of C values (escaped); columns in
    `numeric` right-aligned."""
    head = "" if header is None else "<thead><tr>" + "".join(f"<th>{escape(h)}</th>" for h in header) + "</tr></thead>"
    body = "".join(
        "<tr>"
        + "".join(
            f'<td class="number">{escape(v)}</td>' if c in numeric else f"<td>{escape(v)}</td>"
            for c, v in enumerate(row)
        )
        + "</tr>"
        for row in rows
    )
    return f"<table>{head}<tbody>{body}</tbody></table>"


def html_section(anchor, heading, body):
    return f'<section id="{anchor}"><h2>{escape(heading)}</h2>\n{body}\n</section>'


def absent(sentence):
    """Why a section has no figure: the sentence escaped, `command` spans set as code."""
    return '<p class="absent">' + re.sub(r"`([^`]+)`", r"<code>\1</code>", escape(sentence)) + "</p>"


def page(title, fragments):
    """The whole page: a title (escaped) and the HTML fragments [str] in order, empty ones left out."""
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<link rel="icon" href="data:,">\n'
        f"<title>{escape(title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<main>\n"
        f"<h1>{escape(title)}</h1>\n" + "\n".join(s for s in fragments if s) + "\n</main>\n</body>\n</html>\n"
    )
