"""A line chart as inline SVG, drawn on the server: no JavaScript and nothing fetched, so the console
works offline."""

from dataclasses import dataclass

from django.utils.html import escape

WIDTH, HEIGHT = 640, 220
LEFT, RIGHT, TOP, BOTTOM = 44, 44, 12, 28


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
    """Values between `low` and `high`; gaps where a value is None; every point labelled on hover;
    `reference`: a dashed line at a value, with its label (a threshold)."""
    if not points:
        return ""
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    step = plot_w / max(len(points) - 1, 1)

    def x(i: int) -> float:
        return LEFT + i * step

    def y(v: float) -> float:
        return TOP + plot_h * (1 - (v - low) / (high - low))

    parts = [
        f'<svg class="tc-chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{escape(title)}">',
        f"<title>{escape(title)}</title>",
    ]
    for tick in (low, (low + high) / 2, high):
        parts.append(
            f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y(tick):.1f}" y2="{y(tick):.1f}" stroke="#ccc"/>'
            f'<text x="{LEFT - 6}" y="{y(tick) + 4:.1f}" text-anchor="end">{tick:.1f}</text>'
        )
    if reference is not None:
        value, label = reference
        parts.append(
            f'<line x1="{LEFT}" x2="{WIDTH - RIGHT}" y1="{y(value):.1f}" y2="{y(value):.1f}" stroke="#8b0000" '
            f'stroke-dasharray="5 4"/><text x="{WIDTH - RIGHT - 4}" y="{y(value) - 5:.1f}" text-anchor="end" '
            f'fill="#8b0000">{escape(label)}</text>'
        )
    segment: list[str] = []
    segments: list[list[str]] = []
    for i, p in enumerate(points):
        if p.value is None:
            if segment:
                segments.append(segment)
            segment = []
            continue
        segment.append(f"{x(i):.1f},{y(p.value):.1f}")
    if segment:
        segments.append(segment)
    for seg in segments:
        parts.append(f'<polyline fill="none" stroke="#2b6cb0" stroke-width="2" points="{" ".join(seg)}"/>')
    for i, p in enumerate(points):
        if p.value is not None:
            parts.append(
                f'<circle cx="{x(i):.1f}" cy="{y(p.value):.1f}" r="3" fill="#2b6cb0">'
                f"<title>{escape(p.label)}: {p.value:.3f}</title></circle>"
            )
    for i in sorted({0, len(points) // 2, len(points) - 1}):
        parts.append(
            f'<text x="{x(i):.1f}" y="{HEIGHT - 8}" text-anchor="middle">{escape(points[i].label)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)
