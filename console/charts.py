"""A line chart for the console's pages, drawn on the server by the one chart stack
(config/charts.py, matplotlib's SVG): no JavaScript and nothing fetched, so the console works
offline."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Point:
    label: str
    value: float | None  # None: no data in the period (a gap in the line)


def line_chart_svg(
    points: list[Point],
    *,
    title: str,
    low: float = 0.0,
    high: float = 1.0,
    reference: tuple[float, str] | None = None,
) -> str:
    """Values between `low` and `high`; gaps where a value is None; `reference`: a dashed line at
    a value, with its label (a threshold). The SVG is titled for screen readers."""
    if not points:
        return ""
    from config.charts import BLUE, ORANGE, plt, svg  # matplotlib at the first chart, not at start

    fig, ax = plt.subplots(figsize=(7.2, 2.4))
    values = [p.value if p.value is not None else float("nan") for p in points]  # nan: a gap
    ax.plot(range(len(points)), values, color=BLUE, marker="o", markersize=3, linewidth=1.6)
    if reference is not None:
        ax.axhline(reference[0], color=ORANGE, linestyle="--", linewidth=0.9, label=reference[1])
        ax.legend(loc="lower left", frameon=False, fontsize=8)
    ax.set_ylim(low, high)
    ticks = sorted({0, len(points) // 2, len(points) - 1})
    ax.set_xticks(ticks)
    ax.set_xticklabels([points[i].label for i in ticks])
    ax.set_title(title, loc="left")
    text = svg(fig)
    inline = text[text.index("<svg ") :]  # inside a page: no XML prolog
    return inline.replace("<svg ", f'<svg class="tc-chart" role="img" aria-label="{_attr(title)}" ', 1)


def _attr(text: str) -> str:
    return text.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")
