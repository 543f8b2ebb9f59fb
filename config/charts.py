"""The one chart stack: matplotlib's SVG backend (no display, no fonts fetched, no JavaScript),
styled once here for the reports (compliance/charts.py) and the staff console
(console/charts.py) alike."""

import io
from typing import TYPE_CHECKING

import matplotlib

matplotlib.use("svg")

import matplotlib.pyplot as plt

if TYPE_CHECKING:
    from matplotlib.figure import Figure

BLUE = "#1f4e79"
ORANGE = "#c55a11"
GREY = "#a6a6a6"
plt.rcParams.update(
    {
        "font.size": 9,
        "font.family": "DejaVu Sans",
        "axes.spines.top": False,
        "axes.spines.right": False,
        "svg.fonttype": "path",
        "svg.hashsalt": "trustcal",  # stable ids: the same data draws the same bytes
        # Labels come from customers' data (subgroup values, attribute names): every character
        # is drawn as itself. With math parsing on, a `$` started mathtext and a value like
        # `$\bad{$` failed every PDF of its period (docs/reference/limits.md, "Chart labels").
        "text.parse_math": False,
        "text.usetex": False,
    }
)


def svg(fig: "Figure", *, glyphs: bool = True) -> str:
    """The figure as SVG text, closed. `glyphs=False` (the PDF reports' charts): text as `<text>`
    in DejaVu Sans, which WeasyPrint lays out and embeds like the page's own text, rather than one
    `<use>` of a drawn glyph per character."""
    buffer = io.StringIO()
    with plt.rc_context({"svg.fonttype": "path" if glyphs else "none"}):
        fig.savefig(buffer, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(fig)
    return buffer.getvalue()


__all__ = ["BLUE", "GREY", "ORANGE", "plt", "svg"]
