#!/usr/bin/env python3
"""Picture test of `canopy trace --svg`: a known program (canopy_trace_app:
a data-flow diamond and 64 tasks on 2 workers) is traced, its timeline drawn
as SVG, rendered by headless Chromium into a PNG, and the PNG's pixels
checked: the two worker rows are where the layout puts them, task boxes in
the colour the legend gives the biggest label sit inside the rows, and the
legend shows that colour. The PNG is decoded here with the standard
library (zlib), so the test needs nothing but Chromium.

usage: svg_picture_test.py CANOPY_CLI TRACE_APP WORKDIR
"""
import os
import shutil
import struct
import subprocess
import sys
import zlib

# The layout of tools/canopy/trace_svg.cpp.
LEFT, TOP, ROW_H, GAP = 150, 40, 28, 6
ROW_BG = (0xF4, 0xF4, 0xF4)
FIRST_COLOUR = (0x1F, 0x77, 0xB4)  # the label with the most time


def read_png(path):
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        kind = data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            assert depth == 8 and colour in (2, 6) and interlace == 0, (depth, colour, interlace)
            channels = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, prev, i = [], bytearray(stride), 0
    for _ in range(height):
        f = raw[i]
        line = bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - channels] if x >= channels else 0
            b = prev[x]
            c = prev[x - channels] if x >= channels else 0
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append([tuple(line[x:x + 3]) for x in range(0, stride, channels)])
        prev = line
    return width, height, rows


def close(p, q, tol=6):
    return all(abs(a - b) <= tol for a, b in zip(p, q))


def main():
    cli, app, work = sys.argv[1:4]
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        print("svg_picture_test: chromium is not installed (scripts/setup.sh installs it)")
        return 1
    os.makedirs(work, exist_ok=True)
    trace, svg, png = (os.path.join(work, n) for n in ("app.json", "app.svg", "app.png"))
    env = dict(os.environ, CANOPY_TRACE=trace)
    subprocess.run([app], env=env, check=True)
    out = subprocess.run([cli, "trace", trace, "--svg", svg, "--width", "800"], check=True,
                         capture_output=True, text=True).stdout
    assert "critical path (data-flow, as observed): 2 tasks" in out, out
    text = open(svg).read()
    height = int(text.split('height="', 1)[1].split('"', 1)[0])
    subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    "--screenshot=" + png, "--window-size=800,%d" % height, "file://" + os.path.abspath(svg)],
                   check=True, capture_output=True)
    w, h, px = read_png(png)
    assert (w, h) == (800, height), (w, h, height)
    assert close(px[5][5], (255, 255, 255)), px[5][5]
    for r in range(2):
        y0 = TOP + r * (ROW_H + GAP)
        band = [px[y][x] for y in range(y0, y0 + ROW_H) for x in range(LEFT, w - 20)]
        # The row is drawn: its background or boxes fill the band, no white.
        assert not any(close(p, (255, 255, 255), 2) for p in band), "row %d has white holes" % r
        assert any(close(p, ROW_BG, 2) for p in band), "row %d has no background (idle time)" % r
    # Task boxes of the biggest label inside the rows, and its legend entry below them.
    rows_top, rows_bottom = TOP, TOP + 2 * (ROW_H + GAP)
    in_rows = sum(1 for y in range(rows_top, rows_bottom) for x in range(LEFT, w) if close(px[y][x], FIRST_COLOUR))
    in_legend = sum(1 for y in range(rows_bottom + 20, h) for x in range(LEFT, w) if close(px[y][x], FIRST_COLOUR))
    assert in_rows > 0, "no task box in the label's colour inside the worker rows"
    assert in_legend >= 100, "the legend's swatch of the first label is missing (%d pixels)" % in_legend
    # Nothing is drawn left of the rows but their names (dark text on white).
    left_colours = {px[y][x] for y in range(rows_top, rows_bottom) for x in range(0, LEFT - 60)}
    assert all(close(p, (255, 255, 255), 2) for p in left_colours), "boxes leak into the row names"
    print("svg_picture_test: ok (%dx%d, %d task pixels in the rows)" % (w, h, in_rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
