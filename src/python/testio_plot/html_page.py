"""The one-file HTML report: the start lines, every plot (SVG, inlined as data: URIs so the page
needs no network and no other file), and the tables. Readable on a narrow screen: the plots scale
to the width and wide tables scroll sideways inside their own box."""
import base64
import html

STYLE = """
body { font-family: system-ui, sans-serif; margin: 0 auto; max-width: 1100px; padding: 0 12px; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 1.6em; } h3 { font-size: 1em; }
figure { margin: 1em 0; } figure img { width: 100%; height: auto; display: block; }
figcaption { font-weight: bold; margin-bottom: 0.3em; }
.scroll { overflow-x: auto; max-width: 100%; }
table { border-collapse: collapse; font-size: 0.85em; margin-bottom: 0.4em; }
th, td { border: 1px solid #ccc; padding: 2px 6px; text-align: right; white-space: nowrap; }
th { background: #f2f2f2; } td:first-child { text-align: left; }
.note { background: #fff4d6; border-left: 4px solid #e0a000; padding: 6px 10px; }
.small { color: #666; font-size: 0.85em; }
"""

# The tables shown before the plots: what ran.
LEADING = (": the test", ": the campaign")


def page(heading, notes, drawn_plots, tables):
    """The page's text. `drawn_plots`: [(plot, svg bytes)]; `tables`: tables.Table list."""
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             '<meta name="viewport" content="width=device-width, initial-scale=1">',
             f"<title>{html.escape(heading)}</title><style>{STYLE}</style></head><body>",
             f"<h1>{html.escape(heading)}</h1>"]
    parts.extend(f'<p class="note">{html.escape(note)}</p>' for note in notes)
    starts = [t for t in tables if t.title.endswith(LEADING)]
    others = [t for t in tables if not t.title.endswith(LEADING)]
    parts.extend(_table(t) for t in starts)
    if drawn_plots:
        parts.append("<h2>Plots</h2>")
    for plot, svg in drawn_plots:
        data = base64.b64encode(svg).decode("ascii")
        parts.append(f'<figure id="{html.escape(plot.key)}"><figcaption>{html.escape(plot.title)}</figcaption>'
                     f'<img alt="{html.escape(plot.title)}" src="data:image/svg+xml;base64,{data}"></figure>')
    if others:
        parts.append("<h2>Figures</h2>")
    parts.extend(_table(t) for t in others)
    parts.append('<p class="small">Made by testio plot.</p></body></html>')
    return "\n".join(parts) + "\n"


def _table(table):
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in table.columns)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(cell))}</td>" for cell in row) + "</tr>" for row in table.rows)
    note = f'<p class="small">{html.escape(table.note)}</p>' if table.note else ""
    header = f"<thead><tr>{head}</tr></thead>" if any(table.columns) else ""
    return f'<h3>{html.escape(table.title)}</h3><div class="scroll"><table>{header}<tbody>{body}</tbody></table></div>{note}'
