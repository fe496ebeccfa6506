"""--mesh: the K x K matrix of goodput from each sender (row) to each receiver (column), failed
pairs crossed out, and each host's totals out and in beside it. One row per mesh report."""
import math

from . import style


def matrix(mesh):
    """(ranks, Gbit/s by [sender][receiver] or None where no pair ran, failed (sender, receiver))."""
    ranks = int(mesh.get("ranks") or len(mesh.get("hosts") or []))
    rates = [[None] * ranks for _ in range(ranks)]
    failed = []
    reverse = bool(mesh.get("reverse"))
    for pair in mesh.get("pairs") or []:
        sender, receiver = (pair["to"], pair["from"]) if reverse else (pair["from"], pair["to"])
        if not (0 <= sender < ranks and 0 <= receiver < ranks):
            continue
        if pair.get("ok"):
            rates[sender][receiver] = style.gbit(pair.get("bits_per_second"))
        else:
            failed.append((sender, receiver))
    return ranks, rates, failed


def draw(figure, reports):
    axes_grid = figure.subplots(len(reports), 2, squeeze=False, gridspec_kw={"width_ratios": [1.1, 1]})
    for (heat, totals), report in zip(axes_grid, reports):
        _draw_matrix(figure, heat, report)
        _draw_totals(totals, report.mesh)


def _draw_matrix(figure, axes, report):
    ranks, rates, failed = matrix(report.mesh)
    values = [[math.nan if v is None else v for v in row] for row in rates]
    image = axes.imshow(values, cmap="viridis", vmin=0)
    figure.colorbar(image, ax=axes, label="Gbit/s", shrink=0.85)
    for sender, receiver in failed:
        axes.plot(receiver, sender, marker="x", color="#d62728", ms=14, mew=3)
    if ranks <= 12:
        for sender in range(ranks):
            for receiver in range(ranks):
                if rates[sender][receiver] is not None:
                    axes.text(receiver, sender, f"{rates[sender][receiver]:.1f}", ha="center", va="center",
                              fontsize="x-small", color="white")
    axes.set_xlabel("receiver (rank)")
    axes.set_ylabel("sender (rank)")
    title = f"{report.label}: goodput per pair"
    axes.set_title(title + (f", {len(failed)} failed (x)" if failed else ""), fontsize="medium")
    if ranks <= 32:
        axes.set_xticks(range(ranks))
        axes.set_yticks(range(ranks))


def _draw_totals(axes, mesh):
    hosts = sorted(mesh.get("hosts") or [], key=lambda h: h.get("rank", 0))
    ranks = [h.get("rank", 0) for h in hosts]
    width = 0.4
    axes.bar([r - width / 2 for r in ranks], [style.gbit(h.get("out_bits_per_second")) for h in hosts], width,
             label="out (sent)", color="#1f77b4")
    axes.bar([r + width / 2 for r in ranks], [style.gbit(h.get("in_bits_per_second")) for h in hosts], width,
             label="in (received)", color="#ff7f0e")
    for host in hosts:
        if not host.get("listening", True) or host.get("failed_pairs"):
            axes.annotate("failed", (host.get("rank", 0), 0), ha="center", va="bottom", color="#d62728",
                          fontsize="small")
    axes.set_xlabel("host (rank)")
    axes.set_title("each host's totals", fontsize="medium")
    if len(ranks) <= 32:
        axes.set_xticks(ranks)
    style.finish_axes(axes, "Gbit/s")
