// Small hand-written SVG line charts for the cells' evidence (no dependency): a WAL
// size over time, a latency distribution per role.

/** One line of a chart. */
export interface Series {
  /** The legend. */
  name: string;
  /** `[x, y]` points, in x order. */
  points: readonly (readonly [number, number])[];
}

/** A line chart. */
export interface Chart {
  /** The title above the plot. */
  title: string;
  /** The x axis label. */
  xLabel: string;
  /** The y axis label. */
  yLabel: string;
  /** The lines. */
  series: readonly Series[];
}

const COLOURS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"];
const WIDTH = 640;
const HEIGHT = 360;
const PAD = { left: 70, right: 150, top: 36, bottom: 48 };

function escape(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

function tick(value: number): string {
  if (value === 0) return "0";
  const abs = Math.abs(value);
  if (abs >= 1e6) return `${+(value / 1e6).toPrecision(3)}M`;
  if (abs >= 1e3) return `${+(value / 1e3).toPrecision(3)}k`;
  return String(+value.toPrecision(3));
}

/**
 * Renders a line chart as a standalone SVG document.
 *
 * @param chart Title, axis labels and lines.
 * @returns The SVG text.
 */
export function lineChart(chart: Chart): string {
  const all = chart.series.flatMap((s) => s.points);
  const xMax = Math.max(1e-9, ...all.map((p) => p[0]));
  const yMax = Math.max(1e-9, ...all.map((p) => p[1]));
  const plotW = WIDTH - PAD.left - PAD.right;
  const plotH = HEIGHT - PAD.top - PAD.bottom;
  const x = (v: number) => (PAD.left + (v / xMax) * plotW).toFixed(1);
  const y = (v: number) => (PAD.top + plotH - (v / yMax) * plotH).toFixed(1);
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" font-family="sans-serif" font-size="11">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${WIDTH / 2}" y="20" text-anchor="middle" font-size="14">${
      escape(chart.title)
    }</text>`,
    `<line x1="${PAD.left}" y1="${PAD.top + plotH}" x2="${PAD.left + plotW}" y2="${
      PAD.top + plotH
    }" stroke="black"/>`,
    `<line x1="${PAD.left}" y1="${PAD.top}" x2="${PAD.left}" y2="${
      PAD.top + plotH
    }" stroke="black"/>`,
  ];
  for (let i = 0; i <= 4; i++) {
    const xv = (xMax * i) / 4;
    const yv = (yMax * i) / 4;
    out.push(
      `<text x="${x(xv)}" y="${PAD.top + plotH + 16}" text-anchor="middle">${tick(xv)}</text>`,
      `<text x="${PAD.left - 6}" y="${y(yv)}" text-anchor="end" dy="4">${tick(yv)}</text>`,
      `<line x1="${PAD.left}" y1="${y(yv)}" x2="${PAD.left + plotW}" y2="${y(yv)}" stroke="#ddd"/>`,
    );
  }
  out.push(
    `<text x="${PAD.left + plotW / 2}" y="${HEIGHT - 10}" text-anchor="middle">${
      escape(chart.xLabel)
    }</text>`,
    `<text transform="translate(16 ${PAD.top + plotH / 2}) rotate(-90)" text-anchor="middle">${
      escape(chart.yLabel)
    }</text>`,
  );
  chart.series.forEach((s, i) => {
    const colour = COLOURS[i % COLOURS.length]!;
    if (s.points.length) {
      const d = s.points.map((p, j) => `${j ? "L" : "M"}${x(p[0])} ${y(p[1])}`).join(" ");
      out.push(`<path d="${d}" fill="none" stroke="${colour}" stroke-width="1.5"/>`);
    }
    const ly = PAD.top + 14 + i * 16;
    out.push(
      `<line x1="${WIDTH - PAD.right + 10}" y1="${ly - 4}" x2="${WIDTH - PAD.right + 30}" y2="${
        ly - 4
      }" stroke="${colour}" stroke-width="2"/>`,
      `<text x="${WIDTH - PAD.right + 36}" y="${ly}">${escape(s.name)}</text>`,
    );
  });
  out.push("</svg>\n");
  return out.join("\n");
}

/**
 * The empirical distribution of `values` as `[value, fraction <= value]` points.
 *
 * @param values Samples, any order.
 * @returns The CDF points, at most about 200.
 */
export function cdf(values: readonly number[]): [number, number][] {
  const sorted = [...values].sort((a, b) => a - b);
  const step = Math.max(1, Math.floor(sorted.length / 200));
  const out: [number, number][] = [];
  for (let i = 0; i < sorted.length; i += step) out.push([sorted[i]!, (i + 1) / sorted.length]);
  if (sorted.length) out.push([sorted.at(-1)!, 1]);
  return out;
}
