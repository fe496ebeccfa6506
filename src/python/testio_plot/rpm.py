"""--rpm: each direction's responsiveness (RPM, its confidence) and what made it: the trimmed mean
of each probe step (TCP handshake, TLS, an HTTP request on a fresh connection and on a load
connection), as bars per direction; reports overlay side by side."""
from . import style

STEPS = (("tcp_ms", "TCP handshake"), ("tls_ms", "TLS handshake"), ("http_foreign_ms", "HTTP, own connection"),
         ("http_self_ms", "HTTP, on a load connection"))


def directions_of(parts):
    """[(part, direction entry)] of every --rpm report among `parts`."""
    found = []
    for part in parts:
        rpm = ((part.end or {}).get("testio") or {}).get("rpm") or {}
        found.extend((part, entry) for entry in rpm.get("directions") or [])
    return found


def draw(figure, found):
    axes = figure.subplots(1, 1)
    height = 0.8 / max(1, len(found))
    for index, (part, entry) in enumerate(found):
        ys = [row + index * height for row in range(len(STEPS))]
        values = [entry.get(key) or 0 for key, _ in STEPS]
        label = (f"{part.label}: {entry.get('direction')}, {entry.get('rpm', 0):,.0f} RPM "
                 f"({entry.get('confidence', '?')} confidence), {style.gbit(entry.get('goodput_bps')):.2f} Gbit/s load")
        bars = axes.barh(ys, values, height, color=style.colour(index), label=label)
        axes.bar_label(bars, labels=[f"{v:.3g} ms" for v in values], fontsize="x-small", padding=2)
    axes.set_yticks([row + 0.4 - height / 2 for row in range(len(STEPS))])
    axes.set_yticklabels([name for _, name in STEPS])
    axes.invert_yaxis()
    axes.set_xlabel("trimmed mean, ms (log)")
    axes.set_xscale("log")
    axes.grid(True, axis="x", alpha=0.3)
    axes.legend(fontsize="small", loc="upper right")  # above the short handshake bars
