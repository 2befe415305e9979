// A small SVG line chart for benchmark results (no plotting library needed for a few series).

/** Series of {x, y} points on a linear x axis and a linear (or, with logY, log10) y axis; returns SVG text. Dashed series have dashed: true. */
export function lineChart({ title, xLabel, yLabel, series, width = 720, height = 420, logY = false }) {
  if (logY) return logChart({ title, xLabel, yLabel, series, width, height });
  const pad = { left: 70, right: 190, top: 40, bottom: 50 };
  const xs = series.flatMap((s) => s.points.map((p) => p.x));
  const ys = series.flatMap((s) => s.points.map((p) => p.y));
  const xMax = Math.max(...xs);
  const yMax = Math.max(...ys) * 1.05 || 1;
  const px = (x) => pad.left + (x / xMax) * (width - pad.left - pad.right);
  const py = (y) => height - pad.bottom - (y / yMax) * (height - pad.top - pad.bottom);
  const colors = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"];
  const ticks = (max) => Array.from({ length: 6 }, (_, i) => (max * i) / 5);
  const fmt = (v) =>
    v >= 1e6 ? `${(v / 1e6).toFixed(1)}M` : v >= 1e3 ? `${(v / 1e3).toFixed(0)}k` : v.toFixed(v < 10 ? 1 : 0);
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${width / 2 - 60}" y="22" font-size="15">${title}</text>`,
    `<line x1="${pad.left}" y1="${height - pad.bottom}" x2="${width - pad.right}" y2="${height - pad.bottom}" stroke="black"/>`,
    `<line x1="${pad.left}" y1="${pad.top}" x2="${pad.left}" y2="${height - pad.bottom}" stroke="black"/>`,
    ...ticks(xMax).map((t) => `<text x="${px(t) - 12}" y="${height - pad.bottom + 18}">${fmt(t)}</text>`),
    ...ticks(yMax).map(
      (t) =>
        `<text x="${pad.left - 50}" y="${py(t) + 4}">${fmt(t)}</text><line x1="${pad.left}" y1="${py(t)}" x2="${width - pad.right}" y2="${py(t)}" stroke="#eee"/>`,
    ),
    `<text x="${(width - pad.right) / 2}" y="${height - 10}">${xLabel}</text>`,
    `<text x="14" y="${height / 2}" transform="rotate(-90 14 ${height / 2})">${yLabel}</text>`,
  ];
  series.forEach((s, i) => {
    const color = colors[i % colors.length];
    parts.push(
      `<polyline fill="none" stroke="${color}" stroke-width="2" points="${s.points.map((p) => `${px(p.x)},${py(p.y)}`).join(" ")}"/>`,
    );
    for (const p of s.points) parts.push(`<circle cx="${px(p.x)}" cy="${py(p.y)}" r="3" fill="${color}"/>`);
    parts.push(
      `<rect x="${width - pad.right + 12}" y="${pad.top + i * 20}" width="12" height="12" fill="${color}"/><text x="${width - pad.right + 30}" y="${pad.top + i * 20 + 11}">${s.name}</text>`,
    );
  });
  parts.push("</svg>");
  return parts.join("\n");
}

// FP rates span many decades, so they get a log10 y axis; points with y <= 0 (nothing measured) are left out.
function logChart({ title, xLabel, yLabel, series, width, height }) {
  const pad = { left: 70, right: 230, top: 40, bottom: 50 };
  const points = series.map((s) => ({ ...s, points: s.points.filter((p) => p.y > 0) }));
  const xs = points.flatMap((s) => s.points.map((p) => p.x));
  const ys = points.flatMap((s) => s.points.map((p) => Math.log10(p.y)));
  const xMin = Math.min(...xs);
  const xMax = Math.max(...xs);
  const yMin = Math.floor(Math.min(...ys));
  const yMax = Math.ceil(Math.max(...ys));
  const px = (x) => pad.left + ((x - xMin) / (xMax - xMin || 1)) * (width - pad.left - pad.right);
  const py = (y) =>
    height - pad.bottom - ((Math.log10(y) - yMin) / (yMax - yMin || 1)) * (height - pad.top - pad.bottom);
  const colors = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"];
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${pad.left}" y="22" font-size="15">${title}</text>`,
    `<line x1="${pad.left}" y1="${height - pad.bottom}" x2="${width - pad.right}" y2="${height - pad.bottom}" stroke="black"/>`,
    `<line x1="${pad.left}" y1="${pad.top}" x2="${pad.left}" y2="${height - pad.bottom}" stroke="black"/>`,
    ...[...new Set(xs)].map((x) => `<text x="${px(x) - 8}" y="${height - pad.bottom + 18}">${x}</text>`),
    ...Array.from({ length: yMax - yMin + 1 }, (_, i) => yMin + i).map(
      (e) =>
        `<text x="${pad.left - 45}" y="${py(10 ** e) + 4}">1e${e}</text><line x1="${pad.left}" y1="${py(10 ** e)}" x2="${width - pad.right}" y2="${py(10 ** e)}" stroke="#eee"/>`,
    ),
    `<text x="${(width - pad.right) / 2}" y="${height - 10}">${xLabel}</text>`,
    `<text x="14" y="${height / 2}" transform="rotate(-90 14 ${height / 2})">${yLabel}</text>`,
  ];
  points.forEach((s, i) => {
    const color = colors[(s.color ?? i) % colors.length];
    const dash = s.dashed ? ` stroke-dasharray="6 4"` : "";
    parts.push(
      `<polyline fill="none" stroke="${color}" stroke-width="2"${dash} points="${s.points.map((p) => `${px(p.x)},${py(p.y)}`).join(" ")}"/>`,
    );
    if (!s.dashed)
      for (const p of s.points) parts.push(`<circle cx="${px(p.x)}" cy="${py(p.y)}" r="3" fill="${color}"/>`);
    parts.push(
      `<rect x="${width - pad.right + 12}" y="${pad.top + i * 20}" width="12" height="12" fill="${color}"/><text x="${width - pad.right + 30}" y="${pad.top + i * 20 + 11}">${s.name}</text>`,
    );
  });
  parts.push("</svg>");
  return parts.join("\n");
}
