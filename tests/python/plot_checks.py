"""What every testio plot page and picture must be, shared by the plot suites: a PNG drawn (big
enough, not blank), and an HTML report that needs nothing outside itself, opened in headless
Chromium: no console message, no request, every plot decoded and visible; its tables' cells."""
import html.parser
import os
import re
import shutil

import browser
import harness
from harness import check


def check_drawn(png, min_height=300):
    """A PNG of real plots: big enough, and far from blank (ink and many colours)."""
    from PIL import Image  # python3-pil, which python3-matplotlib depends on
    check(os.path.getsize(png) > 10_000, f"{png}: {os.path.getsize(png)} bytes")
    with Image.open(png) as image:
        pixels = image.convert("RGB")
        width, height = pixels.size
        check(width >= 800 and height >= min_height, f"{png}: {width}x{height}")
        ink, colours = ink_share(pixels, (0, 0, width, height))
        check(ink > 0.02 and colours > 16, f"{png}: {ink:.3f} of it drawn, {colours} colours")


def ink_share(image, box):
    """(share of the box's pixels that are not white, distinct colours in it), sampled."""
    left, top, right, bottom = (int(v) for v in box)
    step = max(1, (right - left) * (bottom - top) // 40_000)
    pixels = list(image.crop((left, top, right, bottom)).getdata())[::step]
    return sum(1 for p in pixels if min(p) < 235) / max(1, len(pixels)), len(set(pixels))


class Cells(html.parser.HTMLParser):
    """Every table cell's text, by table (the <h3> before it)."""

    def __init__(self):
        super().__init__()
        self.tables, self.title, self.in_cell, self.in_title = {}, "", False, False

    def handle_starttag(self, tag, attrs):
        self.in_cell = tag in ("td", "th")
        self.in_title = tag == "h3"
        if tag == "h3":
            self.title = ""
        if self.in_cell:
            self.tables.setdefault(self.title, []).append("")

    def handle_endtag(self, tag):
        self.in_cell = self.in_cell and tag not in ("td", "th")
        self.in_title = self.in_title and tag != "h3"

    def handle_data(self, data):
        if self.in_title:
            self.title += data
        elif self.in_cell:
            self.tables[self.title][-1] += data


def checked_page(page):
    """Opens the HTML report `page` in Chromium and checks what every page must be; returns
    ({table title: cells}, the plots' ids in order)."""
    with open(page, encoding="utf-8") as file:
        text = file.read()
    check(len(text) < 2_000_000, f"{page}: {len(text)} bytes")
    links = re.findall(r'(?:src|href)="([^"]*)"', text) + re.findall(r'url\(([^)]*)\)', text)
    outside = [link for link in links if not link.startswith(("data:", "#"))]
    check(not outside, f"{page} links outside itself: {outside[:3]}")
    seen = browser.visit(page, os.path.splitext(page)[0] + ".screenshot.png")
    check(not seen.console, f"{page}: the console said {seen.console[:3]}")
    check(not seen.requests, f"{page} asked for {seen.requests[:3]}")
    figures = seen.layout["images"]
    check(figures and all(image["decoded"] and image["width"] > 300 and image["height"] > 150 for image in figures),
          f"{page}: images {figures}")
    from PIL import Image
    with Image.open(seen.screenshot) as shot:
        pixels = shot.convert("RGB")
        for image in figures:
            box = (image["x"], image["y"], image["x"] + image["width"], min(image["y"] + image["height"], pixels.size[1]))
            ink, colours = ink_share(pixels, box)
            check(ink > 0.01 and colours > 8, f"{page}: plot {image['id']} shows {ink:.3f} ink, {colours} colours")
    cells = Cells()
    cells.feed(text)
    return cells.tables, [image["id"] for image in figures]


def table(tables, ending):
    found = [cells for title, cells in tables.items() if title.endswith(ending)]
    check(found, f"no table titled ...{ending}: {list(tables)}")
    return found[0]


def run_suite(scratch):
    """Runs the suite's tests, then closes the shared Chromium and removes `scratch`."""
    try:
        harness.main()
    finally:
        browser.close()
        shutil.rmtree(scratch, ignore_errors=True)
