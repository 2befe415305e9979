// A small SVG line chart for benchmark results (no plotting library needed for a few series).

/** Series of {x, y} points drawn on linear axes; returns SVG text. */
export function lineChart({ title, xLabel, yLabel, series, width = 720, height = 420 }) {
  const pad = { left: 70, right: 190, top: 40, bottom: 50 };
  const xs = series.flatMap((s) => s.points.map((p) => p.x));
  const ys = series.flatMap((s) => s.points.map((p) => p.y));
  const xMax = Math.max(...xs);
  const yMax = Math.max(...ys) * 1.05 || 1;
  const px = (x) => pad.left + (x / xMax) * (width - pad.left - pad.right);
  const py = (y) => height - pad.bottom - (y / yMax) * (height - pad.top - pad.bottom);
  const colors = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"];
  const ticks = (max) => Array.from({ length: 6 }, (_, i) => (max * i) / 5);
  const fmt = (v) => (v >= 1e6 ? `${(v / 1e6).toFixed(1)}M` : v >= 1e3 ? `${(v / 1e3).toFixed(0)}k` : v.toFixed(v < 10 ? 1 : 0));
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${width / 2 - 60}" y="22" font-size="15">${title}</text>`,
    `<line x1="${pad.left}" y1="${height - pad.bottom}" x2="${width - pad.right}" y2="${height - pad.bottom}" stroke="black"/>`,
    `<line x1="${pad.left}" y1="${pad.top}" x2="${pad.left}" y2="${height - pad.bottom}" stroke="black"/>`,
    ...ticks(xMax).map((t) => `<text x="${px(t) - 12}" y="${height - pad.bottom + 18}">${fmt(t)}</text>`),
    ...ticks(yMax).map((t) => `<text x="${pad.left - 50}" y="${py(t) + 4}">${fmt(t)}</text><line x1="${pad.left}" y1="${py(t)}" x2="${width - pad.right}" y2="${py(t)}" stroke="#eee"/>`),
    `<text x="${(width - pad.right) / 2}" y="${height - 10}">${xLabel}</text>`,
    `<text x="14" y="${height / 2}" transform="rotate(-90 14 ${height / 2})">${yLabel}</text>`,
  ];
  series.forEach((s, i) => {
    const color = colors[i % colors.length];
    parts.push(`<polyline fill="none" stroke="${color}" stroke-width="2" points="${s.points.map((p) => `${px(p.x)},${py(p.y)}`).join(" ")}"/>`);
    for (const p of s.points) parts.push(`<circle cx="${px(p.x)}" cy="${py(p.y)}" r="3" fill="${color}"/>`);
    parts.push(`<rect x="${width - pad.right + 12}" y="${pad.top + i * 20}" width="12" height="12" fill="${color}"/><text x="${width - pad.right + 30}" y="${pad.top + i * 20 + 11}">${s.name}</text>`);
  });
  parts.push("</svg>");
  return parts.join("\n");
}
