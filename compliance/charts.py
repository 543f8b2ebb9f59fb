"""The report's charts as SVG, drawn from the report data with matplotlib's SVG backend (no
display, no fonts fetched): the trust-score trend and the subgroup comparison."""

from config.jsondoc import JSONObject

# Each function imports the chart stack (config/charts.py) when it draws: importing matplotlib costs
# about a second, which every process (web, worker, manage.py) paid at start through the admin.


def trust_trend(trend: JSONObject) -> str:
    from config.charts import BLUE, GREY, plt, svg

    points = trend["points"]
    labels = [p["period_start"][5:] if trend["interval"] == "day" else p["period_start"] for p in points]
    x = list(range(len(points)))
    fig, ax = plt.subplots(figsize=(7.2, 2.8))
    bars = ax.twinx()
    bars.bar(x, [p["decisions"] for p in points], color=GREY, alpha=0.35, width=0.8, label="decisions")
    bars.set_ylabel("decisions", color="#595959")
    bars.spines["top"].set_visible(False)
    ax.set_zorder(bars.get_zorder() + 1)
    ax.patch.set_visible(False)
    scored = [(i, p["trust_score"]) for i, p in enumerate(points) if p["trust_score"] is not None]
    if scored:
        ax.plot(
            [i for i, _ in scored],
            [s for _, s in scored],
            color=BLUE,
            marker="o",
            markersize=3,
            linewidth=1.6,
            label="trust score",
        )
    ax.set_ylim(0, 1.02)
    ax.set_ylabel("trust score (0-1)")
    step = max(1, len(points) // 10)
    ax.set_xticks(x[::step])
    ax.set_xticklabels(labels[::step], rotation=0)
    ax.set_title(f"Trust score per {trend['interval']} ({trend['trend']['direction']})", loc="left")
    ax.legend(loc="lower left", frameon=False, fontsize=8)
    return svg(fig, glyphs=False)


def subgroups(attributes: JSONObject, *, max_attributes: int = 3, max_groups: int = 6) -> str | None:
    from config.charts import BLUE, GREY, plt, svg

    """Per attribute, the favourable rate of the AI's recommendations and of the humans'
    decisions per group, side by side: where the bars of one group part, review changed it."""
    names = list(attributes)[:max_attributes]
    if not names:
        return None
    fig, axes = plt.subplots(1, len(names), figsize=(7.2, 2.8), squeeze=False)
    for ax, name in zip(axes[0], names, strict=False):
        groups = attributes[name]["groups"][:max_groups]
        x = list(range(len(groups)))
        ai = [g["ai_favorable_rate"] or 0 for g in groups]
        human = [g["favorable_rate"] or 0 for g in groups]
        ax.bar([i - 0.2 for i in x], ai, width=0.4, color=GREY, label="AI")
        ax.bar([i + 0.2 for i in x], human, width=0.4, color=BLUE, label="human")
        ax.set_xticks(x)
        ax.set_xticklabels([str(g["group"])[:12] for g in groups], rotation=30, ha="right")
        ax.set_ylim(0, 1)
        ax.set_title(name, loc="left")
    axes[0][0].set_ylabel("favourable rate")
    axes[0][0].legend(frameon=False, fontsize=8)
    fig.tight_layout()
    return svg(fig, glyphs=False)


def drift_chart(points: list[JSONObject], *, h: float, title: str, lower: float | None = None) -> str:
    from config.charts import BLUE, GREY, ORANGE, plt, svg

    """A drift monitor's chart (docs/reference/drift.md, The charts): the statistic against the
    point index, the alarm limit h, a marker at each signal and a tick at each restart. For the
    probe SPRT the statistic is S and `lower` the bound of an h0 conclusion."""
    fig, ax = plt.subplots(figsize=(7.2, 2.6))
    index = [p["index"] for p in points]
    value = [p["x"] if "x" in p else p["llr_sum"] for p in points]
    ax.plot(index, value, color=BLUE, linewidth=1.0, drawstyle="steps-post", label="statistic")
    ax.axhline(h, color=ORANGE, linestyle="--", linewidth=0.9, label=f"alarm limit {h:g}")
    if lower is not None:
        ax.axhline(lower, color=GREY, linestyle="--", linewidth=0.9, label=f"h0 bound {lower:g}")
    signals = [
        (p["index"], v)
        for p, v in zip(points, value, strict=True)
        if p.get("signal") or p.get("conclusion") == "h1"
    ]
    if signals:
        ax.scatter(
            [i for i, _ in signals],
            [v for _, v in signals],
            color=ORANGE,
            marker="v",
            s=28,
            zorder=3,
            label="signal",
        )
    restarts = [p["index"] for p in points if p.get("restart")]
    if restarts:
        floor = lower if lower is not None else 0.0
        ax.scatter(restarts, [floor] * len(restarts), color=GREY, marker="|", s=40, zorder=2, label="restart")
    ax.set_xlabel("chart point")
    ax.set_ylabel("CUSUM X" if lower is None else "SPRT S")
    top = max([h, *value]) * 1.35  # room for the legend above the limit
    ax.set_ylim(bottom=0 if lower is None else min([lower, *value]) * 1.1, top=top)
    ax.set_title(title, loc="left")
    ax.legend(loc="upper left", frameon=False, fontsize=7, ncols=4)
    return svg(fig, glyphs=False)
