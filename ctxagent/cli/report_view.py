"""Draw a context report (`ctxagent context`, `ctxagent inspect`, chat `/context`) at any width.

The budget line, the layer chart (its bars shrink to the terminal: at 60 columns every
number is still whole) and the packets. From NARROW_COLUMNS on, the packets are one table
row each, with type, recency and a preview from WIDE_COLUMNS on; on a narrower terminal each
packet is one line of short columns with its reason on the line under it (never a
column wrapped letter by letter), the full id beside the reason when the row cut it.
"""

from __future__ import annotations

from typing import Any

from rich import box
from rich.console import Console, Group
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from ctxagent.cli.safe_text import markup, one_line
from ctxagent.context.record.report import layer_rows

_DECISION_STYLE = {"selected": "green", "truncated": "yellow", "dropped": "red"}
BAR_WIDTH = 36  # with the merged "history + tool_results" row the chart fits 80 columns
MIN_BAR_WIDTH = 8
WIDE_COLUMNS = 150  # terminal width from which the packet table shows previews
NARROW_COLUMNS = 100  # below it, a packet's reason goes under its row
_CHART_FIXED = 22 + 6 + 6 + 6 + 2  # layer name, tokens, budget, column gaps, the closing bar and a spare cell


def draw_report(console: Console, report: dict, *, title: str = "") -> None:
    """The budget line, the layer bar chart and the packet table of a builder/assembler report."""
    budget = report.get("budget", {})
    console.rule(markup(title) if title else "report")
    console.print(
        f"used [bold]{budget.get('used_tokens', '?')}[/] of {budget.get('input_budget', '?')} input tokens "
        f"(window {budget.get('max_tokens', '?')}, {budget.get('reserve_tokens', '?')} reserved for the reply; "
        f"tools {budget.get('tools_tokens', 0)}); query type {report.get('query_type', '?')}, "
        f"{'exact' if report.get('exact') else 'estimated'} counts"
    )
    console.print(layer_chart(report, console.width))
    problems = {k: v for k, v in (report.get("sources") or {}).items() if not v.get("ok", True)}
    for name, info in problems.items():
        console.print(f"[yellow]source {markup(name)}: {markup(str(info.get('error')))}[/]")
    console.print(packet_table(report.get("packets", []), console.width))


def layer_chart(report: dict, width: int = 200) -> Table:
    """One row per layer (`reporting.layer_rows`): tokens used, budget, and a bar of both against the input
    budget, then the "unused" and "input budget" rows; the caption explains the unused room and the bars.
    `width`: the terminal's columns (the bars shrink to fit). How the bars read: docs/context.md."""
    layers, budget = report.get("layers", {}), report.get("budget", {})
    total = max(1, int(budget.get("input_budget") or 1))
    cells = max(MIN_BAR_WIDTH, min(BAR_WIDTH, width - _CHART_FIXED))
    marked = any("fixed" in entry for entry in layers.values())
    table = Table(box=None, show_header=True, header_style="bold", pad_edge=False, caption_justify="left",
                  caption=_chart_caption(budget) if marked else OLD_SNAPSHOT_NOTE)
    for column in ("layer", "tokens", "budget", ""):
        table.add_column(column, justify="right" if column in ("tokens", "budget") else "left", no_wrap=True)
    budgets = 0
    for name, entry in layer_rows(layers):
        used, allowed = int(entry.get("used", 0)), int(entry.get("budget", 0))
        budgets += allowed
        fixed = bool(entry.get("fixed"))
        table.add_row(name, str(used), f"[dim]{allowed}[/]" if fixed else str(allowed),
                      _bar(total, used, None if fixed else allowed, cells) + "│")
    if marked:
        unused = int(budget.get("unused_tokens", total - int(budget.get("used_tokens") or 0)))
        table.add_row("unused", str(unused), str(total - budgets) if total != budgets else "", "")
        table.add_row("[bold]input budget[/]", str(total), str(total), "")
    return table


#: The layer chart's caption for a snapshot written before fixed parts were marked.
OLD_SNAPSHOT_NOTE = ("[dim]written by an older ctxagent: a budget equal to the tokens is the part's size, not an "
                     "allowance, and the tool schemas are in no row (or in current)[/]")
_LEGEND = "[dim]▒ a fixed part's size, █ tokens used, ··· budget not used, ▓ tokens beyond the budget[/]"


def _chart_caption(budget: dict) -> str:
    note = budget.get("unused_note")
    return f"unused {budget.get('unused_tokens', '?')} tokens" + (f": {markup(note)}" if note else "") + "\n" + _LEGEND


def _bar(total: int, used: int, allowed: int | None, width: int = BAR_WIDTH) -> str:
    """`width` cells standing for `total` tokens, then a label if it fits. A fixed part
    (`allowed` None): its size hatched, "fixed". A layer: solid to its tokens, dotted on to
    its budget, shaded beyond it with "+excess"."""
    cells = lambda tokens: min(width, round(width * max(0, tokens) / total))
    if allowed is None:
        bar, reach, label = "[dim]" + "▒" * cells(used) + "[/]", cells(used), " fixed"
    else:
        solid, reach = cells(min(used, allowed)), cells(max(used, allowed))
        rest = "[magenta]" + "▓" * (reach - solid) + "[/]" if used > allowed else "·" * (reach - solid)
        bar, label = "[cyan]" + "█" * solid + "[/]" + rest, f" +{used - allowed}" if used > allowed else ""
    label = label if reach + len(label) <= width else ""
    return bar + label + " " * (width - reach - len(label))


def packet_table(rows: list[dict], width: int = 200) -> Table | Group:
    """Every packet: id, layer, tokens, relevance, score, decision, reason; on terminals of
    WIDE_COLUMNS or more also type, recency and a preview; under NARROW_COLUMNS `packet_lines`."""
    if width < NARROW_COLUMNS:
        return packet_lines(rows, width)
    wide = width >= WIDE_COLUMNS
    columns = ["id", "layer", *(["type"] if wide else []), "tok", "rel", *(["rec"] if wide else []), "score", "decision", "reason"]
    columns += ["preview"] if wide else []
    table = Table(box=box.SIMPLE_HEAD, header_style="bold", expand=False, pad_edge=False)
    for column in columns:
        numeric = column in ("tok", "rel", "rec", "score")
        table.add_column(column, justify="right" if numeric else "left", no_wrap=column != "reason",
                         overflow="fold" if column == "reason" else "ellipsis", min_width=24 if column == "reason" else None,
                         max_width=None if column == "reason" else 40 if wide else 24)
    for r in rows:
        cells = _cells(r)
        cells["preview"] = markup(str(r.get("preview", ""))[:80])
        table.add_row(*(cells[c] for c in columns))
    return table


def _cells(r: dict) -> dict[str, str]:
    style = _DECISION_STYLE.get(str(r.get("decision")), "white")
    return {"id": markup(str(r.get("id", ""))), "layer": str(r.get("layer", "")), "type": markup(str(r.get("type", ""))),
            "tok": str(r.get("tokens", "")), "rel": _num(r.get("relevance")), "rec": _num(r.get("recency")),
            "score": _num(r.get("score")), "decision": f"[{style}]{r.get('decision', '')}[/]",
            "reason": markup(str(r.get("reason", "")))}


#: The short columns of `packet_lines`: (name, right-aligned, most characters).
_SHORT_COLUMNS = (("layer", False, 12), ("tok", True, 6), ("rel", True, 4), ("score", True, 5), ("decision", False, 9))


def packet_lines(rows: list[dict], width: int) -> Group:
    """Packets for a narrow terminal: a header, then per packet one line of id (cut to what is
    left), layer, tok, rel, score, decision, and its reason indented on the line under it."""
    plain = [_plain_cells(r) for r in rows]
    widths = {name: min(most, max([len(name), *(len(p[name]) for p in plain)])) for name, _, most in _SHORT_COLUMNS}
    rest = sum(widths.values()) + len(widths)
    id_width = max(6, min(max([2, *(len(p["id"]) for p in plain)]), width - rest - 1))
    parts: list[Any] = [Text(_line({"id": "id", **{n: n for n in widths}}, widths, id_width), style="bold")]
    for r, p in zip(rows, plain):
        style = _DECISION_STYLE.get(str(r.get("decision")), "white")
        line = _line(p, widths, id_width)
        cut_at = len(line) - widths["decision"]
        parts.append(Text(line[:cut_at]) + Text(line[cut_at:], style=style))
        reason = p["reason"] if len(p["id"]) <= id_width else f"{p['id']}: {p['reason']}"
        if reason:
            parts.append(Padding(Text(reason, style="dim"), (0, 0, 0, 4)))
    return Group(*parts)


def _plain_cells(r: dict) -> dict[str, str]:
    cells = {"id": r.get("id", ""), "layer": r.get("layer", ""), "tok": r.get("tokens", ""),
             "rel": _num(r.get("relevance")), "score": _num(r.get("score")), "decision": r.get("decision", ""),
             "reason": r.get("reason", "")}
    return {k: one_line(str(v)) for k, v in cells.items()}  # controls shown escaped (safe_text)


def _line(cells: dict[str, str], widths: dict[str, int], id_width: int) -> str:
    out = [_fit(cells["id"], id_width).ljust(id_width)]
    for name, right, _ in _SHORT_COLUMNS:
        text = _fit(cells[name], widths[name])
        out.append(text.rjust(widths[name]) if right else text.ljust(widths[name]))
    return " ".join(out)


def _fit(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _num(value: Any) -> str:
    return f"{value:.2f}" if isinstance(value, (int, float)) else ""
