"""A graph picture (graph_picture.py) as SVG, as a standalone HTML page, or as text.

The SVG is one column of values (origins, then the steps that built the graph, each with its
line as a link) and, beside it, the events of the story in lanes: "iteration k" and
"iteration k + 1" when a loop carries the graph, else one lane in program order. Sizes come
from character counts (monospace), never from a font's metrics, and nothing depends on time or
on the machine: the same picture is the same bytes. Colours are plain, light by
defaults (dark ones under ``prefers-color-scheme``) on classes an editor can restyle.
"""
from __future__ import annotations

import base64
import hashlib
import os
from typing import Callable, Optional
from xml.sax.saxutils import escape

from .findings import Location
from .graph_picture import Node, Picture

Linker = Callable[[Location], Optional[str]]  # a Location -> the href of its code, or None

CH = 7.2  # width of a 12 px monospace character
ROW = 30  # a chain row: a 22 px box and the arrow to the next
BOX = 22
PAD = 16
LABEL_W = 124  # the line labels' column
LANE_W = 250
EVENT_H = 44
MAX_CODE = 64  # characters of code shown in a box
MAX_MESSAGE = 104  # characters per line of the finding's message
LANES = ("iteration k", "iteration k + 1")
LEGEND = "● saves tensors for backward · red: freed, walked again or changed in place · lines link to the code"

LIGHT = {"bg": "#ffffff", "fg": "#1f2328", "muted": "#59636e", "node": "#f6f8fa", "border": "#8c959f",
         "origin": "#1a7f37", "error": "#cf222e", "save": "#9a6700", "link": "#0969da", "cut": "#8250df",
         "lane": "#f0f3f6"}
DARK = {"bg": "#0d1117", "fg": "#e6edf3", "muted": "#9198a1", "node": "#161b22", "border": "#3d444d",
        "origin": "#3fb950", "error": "#f85149", "save": "#d29922", "link": "#4493f8", "cut": "#ab7df8",
        "lane": "#151b23"}
#: the classes' colours, over a palette (plain colours: SVG renderers without CSS variables
#: draw them too; an editor restyles the same classes with its theme's colours)
RULES = """.gg .bg{{fill:{bg}}}.gg text{{fill:{fg}}}.gg .muted{{fill:{muted}}}.gg .node{{fill:{node};stroke:{border}}}
.gg .origin .node{{stroke:{origin}}}.gg .freed .node,.gg .walk .node,.gg .modify .node{{stroke:{error}}}
.gg .free .node{{stroke:{save}}}.gg .badge,.gg .arrow{{fill:{save}}}.gg .line{{fill:{link}}}.gg .edge{{stroke:{muted}}}
.gg .frees{{stroke:{save}}}.gg .walks{{stroke:{error}}}.gg .cut{{stroke:{cut}}}.gg .cuttext{{fill:{cut}}}
.gg .lane{{fill:{lane}}}.gg .err{{fill:{error}}}"""
SHAPES = """svg.gg{font:12px ui-monospace,SFMono-Regular,Menlo,Consolas,"DejaVu Sans Mono",monospace}
.gg .title{font-weight:bold}.gg .origin .node,.gg .freed .node,.gg .walk .node,.gg .modify .node,.gg .free .node{stroke-width:2}
.gg .line{text-decoration:underline}.gg .edge,.gg .frees,.gg .walks{fill:none}.gg .frees,.gg .walks{stroke-width:1.5}
.gg .walks{stroke-dasharray:5 3}.gg .cut{stroke-width:2;stroke-dasharray:6 3}.gg a{cursor:pointer}"""
STYLE = (SHAPES + "\n" + RULES.format(**LIGHT) + "\n@media (prefers-color-scheme: dark){"
         + RULES.format(**DARK) + "}")


def where(loc: Location) -> str:
    return f"cell {loc.cell}, line {loc.line}" if loc.cell else f"line {loc.line}"


def _cut_text(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _wrap(text: str, width: int, lines: int) -> list[str]:
    out, line = [], ""
    for word in text.replace("`", "").split():
        if line and len(line) + 1 + len(word) > width:
            out.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    if line:
        out.append(line)
    if len(out) > lines:
        out = out[:lines]
        out[-1] = _cut_text(out[-1] + " …", width)
    return out


def _n(x: float) -> str:
    """Coordinates as short, stable text."""
    return f"{x:.1f}".rstrip("0").rstrip(".")


class _Svg:
    def __init__(self, link: Linker):
        self.parts: list[str] = []
        self.link = link

    def add(self, text: str) -> None:
        self.parts.append(text)

    def text(self, x: float, y: float, body: str, cls: str = "", anchor: str = "") -> None:
        attrs = f' class="{cls}"' if cls else ""
        attrs += f' text-anchor="{anchor}"' if anchor else ""
        self.add(f'<text x="{_n(x)}" y="{_n(y)}"{attrs}>{escape(body)}</text>')

    def open_link(self, loc: Location, cls: str) -> None:
        href = self.link(loc)
        data = f'data-line="{loc.line}" data-column="{loc.column}"'
        data += f' data-end-line="{loc.end_line}" data-end-column="{loc.end_column}"'
        data += f' data-cell="{loc.cell}"' if loc.cell else ""
        href_attr = f' href="{escape(href, {chr(34): "&quot;"})}"' if href else ""
        self.add(f'<a class="{cls}"{href_attr} {data}><title>{escape(where(loc))}</title>')


def svg(picture: Picture, link: Linker = lambda loc: None, style: bool = True) -> str:
    """The picture as an SVG document. ``style=False`` leaves the ``<style>`` out, for a host
    that styles the classes itself (the VS Code webview, whose CSP allows no inline style)."""
    f = picture.finding
    s = _Svg(link)
    message = _wrap(f.message, MAX_MESSAGE, 4)
    top = PAD + 18 + 16 * len(message) + 16
    code_w = max([len(_cut_text(n.text, MAX_CODE)) for n in picture.origins + picture.chain] + [24])
    box_x = PAD + LABEL_W
    box_w = code_w * CH + 16 + 64  # room for the "saves" badge
    rows: list[tuple[str, object]] = [("origin", n) for n in picture.origins]
    if picture.earlier:
        rows.append(("more", None))
    rows += [("step", n) for n in picture.chain]
    brackets = sum(1 for e in picture.events if e.role in ("free", "walk", "modify"))
    lane_x = box_x + box_w + 40 + 10 * brackets
    lanes = 2 if picture.loop else 1
    width = max(lane_x + LANE_W * lanes, PAD + len(LEGEND) * CH, PAD + MAX_MESSAGE * CH) + PAD
    events_h = 24 + len(picture.events) * (EVENT_H + 12)
    chain_h = 24 + len(rows) * ROW
    legend_y = top + max(chain_h, events_h) + 8
    cut_lines = _wrap(f"✂ quick fix ({where(picture.cut.location)}): {picture.cut.title}", 110, 2) \
        if picture.cut else []
    height = legend_y + 20 + 16 * len(cut_lines) + PAD

    s.add(f'<svg xmlns="http://www.w3.org/2000/svg" class="gg" width="{_n(width)}" height="{_n(height)}" '
          f'viewBox="0 0 {_n(width)} {_n(height)}" role="img" aria-label="{escape(f.code)} graph">')
    if style:
        s.add(f"<style>{STYLE}</style>")
    s.add('<defs><marker id="gg-arrow" viewBox="0 0 8 8" refX="7" refY="4" markerWidth="7" markerHeight="7" '
          'orient="auto"><path d="M0,0 L8,4 L0,8 z" class="arrow"/></marker></defs>')
    s.add(f'<rect class="bg" width="{_n(width)}" height="{_n(height)}"/>')
    s.text(PAD, PAD + 12, f"{f.code} · {f.severity} · {os.path.basename(f.location.path)}, {where(f.location)}",
           "title")
    for i, line in enumerate(message):
        s.text(PAD, PAD + 32 + 16 * i, line)

    s.text(box_x, top + 12, "values, from requires_grad to the loss", "muted")
    y_of: dict[int, float] = {}
    y = top + 24
    for i, (kind, node) in enumerate(rows):
        if kind == "more":
            s.text(box_x + 8, y + 15, "⋮ earlier steps", "muted")
        else:
            _value_row(s, node, box_x, box_w, y)
            if kind == "step":
                y_of[picture.chain.index(node)] = y
        if i + 1 < len(rows):
            s.add(f'<path class="edge" d="M{_n(box_x + 20)},{_n(y + BOX)} V{_n(y + ROW - 1)}" '
                  f'marker-end="url(#gg-arrow)"/>')
        y += ROW

    if picture.cut is not None and picture.cut.step is not None and picture.cut.step in y_of:
        cy = y_of[picture.cut.step] - 4
        s.add(f'<path class="cut" d="M{_n(box_x - 20)},{_n(cy)} H{_n(box_x + box_w)}"/>')
        s.text(box_x - 24, cy + 4, "✂", "cuttext", "end")

    for lane in range(lanes):
        x = lane_x + lane * LANE_W
        s.add(f'<rect class="lane" x="{_n(x)}" y="{_n(top)}" width="{_n(LANE_W - 8)}" '
              f'height="{_n(max(chain_h, events_h))}" rx="6"/>')
        s.text(x + 10, top + 16, LANES[lane] if picture.loop else "then, in program order", "muted")
    bracket = 0
    for i, event in enumerate(picture.events):
        ex = lane_x + event.lane * LANE_W + 10
        ey = top + 28 + i * (EVENT_H + 12)
        targets = _targets(picture, event)
        if targets and event.role in ("free", "walk", "modify"):
            bx = box_x + box_w + 14 + 10 * bracket
            bracket += 1
            ys = [y_of[t] + BOX / 2 for t in targets if t in y_of]
            if ys:
                cls = "frees" if event.role == "free" else "walks"
                ticks = "".join(f" M{_n(box_x + box_w)},{_n(v)} H{_n(bx)}" for v in ys)
                s.add(f'<path class="{cls}" d="M{_n(bx)},{_n(min(ys))} V{_n(max(ys))}{ticks} '
                      f'M{_n(bx)},{_n(ey + EVENT_H / 2)} H{_n(ex)}"/>')
                if not min(ys) <= ey + EVENT_H / 2 <= max(ys):
                    near = min(ys) if ey + EVENT_H / 2 < min(ys) else max(ys)
                    s.add(f'<path class="{cls}" d="M{_n(bx)},{_n(near)} V{_n(ey + EVENT_H / 2)}"/>')
        _event_box(s, event, ex, ey, picture.cut is not None and picture.cut.event == i)

    ly = legend_y + 12
    s.text(PAD, ly, LEGEND, "muted")
    for i, line in enumerate(cut_lines):
        s.text(PAD, ly + 18 + 16 * i, line, "cuttext")
    s.add("</svg>")
    return "\n".join(s.parts) + "\n"


def _targets(picture: Picture, event: Node) -> list[int]:
    """The chain rows an event acts on: what a backward freed (and walks again), or the step
    whose saved tensor an in-place write changed."""
    if event.role in ("free", "walk") and any(n.freed for n in picture.chain):
        return [i for i, n in enumerate(picture.chain) if n.freed]
    if event.role in ("modify", "walk"):
        return [i for i, n in enumerate(picture.chain) if n.saved]
    return []


def _value_row(s: _Svg, node: Node, x: float, w: float, y: float) -> None:
    cls = "origin" if node.role == "origin" else "freed" if node.freed or node.saved else "step"
    s.open_link(node.location, f"value {cls}")
    s.text(x - 10, y + 15, where(node.location), "line", "end")
    s.add(f'<rect class="node" x="{_n(x)}" y="{_n(y)}" width="{_n(w)}" height="{BOX}" rx="4"/>')
    s.text(x + 8, y + 15, _cut_text(node.text, MAX_CODE))
    if node.role == "origin":
        s.text(x + w - 8, y + 15, node.note, "muted", "end")
    elif node.saves:
        s.text(x + w - 8, y + 15, "● saves", "badge", "end")
    s.add("</a>")


def _event_box(s: _Svg, event: Node, x: float, y: float, cut: bool) -> None:
    s.open_link(event.location, f"event {event.role}")
    s.add(f'<rect class="node" x="{_n(x)}" y="{_n(y)}" width="{_n(LANE_W - 28)}" height="{EVENT_H}" rx="4"/>')
    s.text(x + 8, y + 16, where(event.location), "line")
    s.text(x + 8 + (len(where(event.location)) + 1) * CH, y + 16,
           _cut_text(event.text, (LANE_W - 40) // int(CH) - len(where(event.location)) - 1))
    note = ("✂ " if cut else "") + _cut_text(event.note, (LANE_W - 44) // int(CH))
    s.text(x + 8, y + 34, note, "err" if event.role in ("walk", "modify") else "cuttext" if cut else "muted")
    s.add("</a>")


def style_hash() -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(STYLE.encode()).digest()).decode()


def html(picture: Picture, link: Linker = lambda loc: None) -> str:
    """A page that shows the picture and nothing else: no script, no network (its CSP allows
    only the picture's own stylesheet, by hash)."""
    title = escape(f"{picture.finding.code} {where(picture.finding.location)}")
    body = svg(picture, link, style=False)
    return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f'<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
            f'style-src \'{style_hash()}\'">\n<title>GradGuard: {title}</title>\n'
            f"<style>{STYLE}</style>\n</head>\n<body>\n{body}</body>\n</html>\n")


def text(picture: Picture) -> str:
    """The same story as lines of text (a terminal, a CI log)."""
    f = picture.finding
    out = [f"{f.code} {f.severity} at {where(f.location)}: {' '.join(f.message.split())}", ""]
    if picture.origins:
        out.append("requires grad:")
        out += [f"  {where(n.location):>16}  {n.text}  ({n.note})" for n in picture.origins]
    if picture.chain:
        out.append("graph (* saves tensors, ! freed, or saved what is changed in place, below):")
        if picture.earlier:
            out.append(f"  {'':>16}  ⋮ earlier steps")
        for i, n in enumerate(picture.chain):
            mark = ("*" if n.saves else " ") + ("!" if n.freed or n.saved else " ")
            cut = "  ✂ quick fix here" if picture.cut and picture.cut.step == i else ""
            out.append(f"  {where(n.location):>16} {mark} {_cut_text(n.text, MAX_CODE)}{cut}")
    lane = None
    for i, e in enumerate(picture.events):
        header = LANES[e.lane] if picture.loop else "then:"
        if header != lane:
            out.append(f"{header}:" if picture.loop else header)
            lane = header
        cut = "  ✂ quick fix here" if picture.cut and picture.cut.event == i else ""
        out.append(f"  {where(e.location):>16}  {_cut_text(e.text, MAX_CODE)}  → {e.note}{cut}")
    if picture.cut:
        out.append(f"quick fix ({where(picture.cut.location)}): {picture.cut.title}")
    return "\n".join(out) + "\n"
