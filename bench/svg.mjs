// Minimal SVG line charts for the benchmark report (no dependency needed for two plots).

const COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"];

/** A line chart; `series` is `[{ name, points: [[x, y], ...] }]`. `logX` plots x on a log scale. */
export function lineChart({ title, xLabel, yLabel, series, logX = false, markers = [] }) {
  const width = 640;
  const height = 360;
  const m = { left: 70, right: 20, top: 40, bottom: 50 };
  const all = series.flatMap((s) => s.points);
  const fx = (x) => (logX ? Math.log10(x) : x);
  const xs = all.map(([x]) => fx(x));
  const ys = all.map(([, y]) => y);
  const [x0, x1] = [Math.min(...xs), Math.max(...xs) === Math.min(...xs) ? Math.min(...xs) + 1 : Math.max(...xs)];
  const y1 = Math.max(...ys, 1) * 1.1;
  const px = (x) => m.left + ((fx(x) - x0) / (x1 - x0)) * (width - m.left - m.right);
  const py = (y) => height - m.bottom - (y / y1) * (height - m.top - m.bottom);
  const ticks = (lo, hi, n) => Array.from({ length: n + 1 }, (_, i) => lo + ((hi - lo) * i) / n);
  const fmt = (v) => (Math.abs(v) >= 1000 ? `${(v / 1000).toFixed(v >= 10_000 ? 0 : 1)}k` : `${Math.round(v * 10) / 10}`);
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${width / 2}" y="22" text-anchor="middle" font-size="15">${title}</text>`,
    `<line x1="${m.left}" y1="${height - m.bottom}" x2="${width - m.right}" y2="${height - m.bottom}" stroke="black"/>`,
    `<line x1="${m.left}" y1="${m.top}" x2="${m.left}" y2="${height - m.bottom}" stroke="black"/>`,
    `<text x="${width / 2}" y="${height - 12}" text-anchor="middle">${xLabel}</text>`,
    `<text x="16" y="${height / 2}" text-anchor="middle" transform="rotate(-90 16 ${height / 2})">${yLabel}</text>`,
  ];
  for (const y of ticks(0, y1, 5)) {
    parts.push(`<line x1="${m.left - 4}" y1="${py(y)}" x2="${width - m.right}" y2="${py(y)}" stroke="#ddd"/>`);
    parts.push(`<text x="${m.left - 8}" y="${py(y) + 4}" text-anchor="end">${fmt(y)}</text>`);
  }
  const xTicks = logX ? [...new Set(all.map(([x]) => x))] : ticks(Math.min(...all.map(([x]) => x)), Math.max(...all.map(([x]) => x)), 6);
  for (const x of xTicks) parts.push(`<text x="${px(x)}" y="${height - m.bottom + 18}" text-anchor="middle">${fmt(x)}</text>`);
  for (const { x, label } of markers) {
    parts.push(`<line x1="${px(x)}" y1="${m.top}" x2="${px(x)}" y2="${height - m.bottom}" stroke="#555" stroke-dasharray="4 3"/>`);
    parts.push(`<text x="${px(x) + 4}" y="${m.top + 12}" fill="#555">${label}</text>`);
  }
  series.forEach((s, i) => {
    const color = COLORS[i % COLORS.length];
    const d = s.points.map(([x, y], j) => `${j === 0 ? "M" : "L"}${px(x).toFixed(1)},${py(y).toFixed(1)}`).join(" ");
    parts.push(`<path d="${d}" fill="none" stroke="${color}" stroke-width="2"/>`);
    for (const [x, y] of s.points.length <= 12 ? s.points : []) parts.push(`<circle cx="${px(x)}" cy="${py(y)}" r="3" fill="${color}"/>`);
    parts.push(`<rect x="${width - m.right - 150}" y="${m.top + 4 + i * 18}" width="12" height="12" fill="${color}"/>`);
    parts.push(`<text x="${width - m.right - 132}" y="${m.top + 14 + i * 18}">${s.name}</text>`);
  });
  parts.push("</svg>");
  return parts.join("\n");
}
