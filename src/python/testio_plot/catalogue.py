"""Which plots the reports call for, in the order they are shown: each a title, a height and a
function that draws into a matplotlib Figure or SubFigure. The one place that knows every kind."""
from . import distributions, latency, mesh, rpm, streams, udp


class Plot:
    def __init__(self, key, title, height_in, draw):
        self.key = key            # a short name, unique in a report (the HTML's anchors, the tests' checks)
        self.title = title
        self.height_in = height_in
        self.draw = draw          # draw(figure)


def plots_for(reports, tests):
    """The plots of `reports`, whose tests are `tests` (parts.tests_of)."""
    parts = [part for _, _, test_parts in tests for part in test_parts]
    found = []
    for (workload, direction), group in streams.groups(parts).items():
        found.append(Plot(f"throughput-{workload}-{direction}", streams.title(workload, direction), 7.5,
                          lambda figure, group=group: streams.draw(figure, group)))
    runs = latency.runs_of(tests)
    if runs:
        found.append(Plot("latency-timeline", "latency under load: probes over time, phases marked", 4.5,
                          lambda figure: latency.draw_timeline(figure, runs)))
        if latency.kinds_in(runs):
            found.append(Plot("latency-cdf", "latency under load: each phase's distribution", 3.8,
                              lambda figure: latency.draw_cdfs(figure, runs)))
    responsiveness = rpm.directions_of(parts)
    if responsiveness:
        found.append(Plot("rpm", "responsiveness (--rpm): each probe step's trimmed mean, per direction",
                          1.2 + 0.45 * len(responsiveness) * len(rpm.STEPS), lambda figure: rpm.draw(figure, responsiveness)))
    for direction, group in udp.parts_with_loss(parts).items():
        found.append(Plot(f"udp-{direction}", f"UDP {direction}: loss, socket drops and jitter per interval", 6,
                          lambda figure, group=group: udp.draw(figure, group)))
    grouped = distributions.named(parts)
    if grouped:
        rows = (len(grouped) + 1) // 2
        found.append(Plot("distributions", "latency and duration distributions (CDF)", 3.6 * rows,
                          lambda figure: distributions.draw(figure, grouped)))
    meshes = [r for r in reports if r.mesh is not None]
    if meshes:
        found.append(Plot("mesh", "mesh: goodput per pair and per host", 4.5 * len(meshes),
                          lambda figure: mesh.draw(figure, meshes)))
    return found
