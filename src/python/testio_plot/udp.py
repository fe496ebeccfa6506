"""UDP (-u): what the receiver counted per interval: datagrams lost on the way, those its own
sockets dropped (SO_RXQ_OVFL), and jitter. One plot per direction; reports overlay by colour."""
from . import style


def parts_with_loss(parts):
    """The UDP parts whose intervals are the receiver's (they carry lost_packets), by direction."""
    grouped = {}
    for part in parts:
        sums = part.sums
        if part.workload == "udp" and sums and "lost_packets" in sums[0]:
            grouped.setdefault(part.direction, []).append(part)
    return grouped


def draw(figure, parts):
    lost, dropped, jitter = figure.subplots(3, 1, sharex=True)
    for index, part in enumerate(parts):
        sums = part.sums
        colour = style.colour(index)
        for axes in (lost, dropped, jitter):
            style.shade_omitted(axes, sums, index == 0 and axes is lost)
        xs, ys = style.steps(sums, lambda s: s.get("lost_percent", 0))
        lost.plot(xs, ys, drawstyle="steps-post", color=colour, lw=1.6, label=f"{part.label}: lost %")
        xs, ys = style.steps(sums, lambda s: (s.get("testio") or {}).get("socket_drops", 0))
        dropped.plot(xs, ys, drawstyle="steps-post", color=colour, lw=1.6, label=f"{part.label}: socket drops")
        xs, ys = style.steps(sums, lambda s: s.get("jitter_ms", 0))
        jitter.plot(xs, ys, drawstyle="steps-post", color=colour, lw=1.6, label=f"{part.label}: jitter")
    style.finish_axes(lost, "lost %")
    style.finish_axes(dropped, "socket drops")
    style.finish_axes(jitter, "jitter ms")
    for axes in (lost, dropped, jitter):
        style.from_zero(axes)
    jitter.set_xlabel("seconds")
