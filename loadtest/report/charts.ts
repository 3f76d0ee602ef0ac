import * as vega from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';

/**
 * The report's plots: Vega-Lite specifications rendered to SVG in Node (no canvas, no browser), so the
 * report needs nothing beyond npm. Every chart carries its command and machine in its subtitle: a plot
 * copied out of the report still says where it came from.
 */

export interface Chart {
  /** File name without extension, under the report's image folder. */
  name: string;
  /** Alt text and Markdown caption. */
  title: string;
  spec: TopLevelSpec;
}

export interface Caption {
  title: string;
  command: string;
  machine: string;
}

const FONT = 'Helvetica, Arial, sans-serif';

function header(c: Caption) {
  return {
    text: c.title,
    subtitle: [`$ ${c.command}`, c.machine],
    anchor: 'start' as const,
    font: FONT,
    subtitleFont: FONT,
    subtitleColor: '#555',
    subtitleFontSize: 10,
  };
}

const CONFIG = {
  font: FONT,
  view: { stroke: null },
  axis: { labelFontSize: 11, titleFontSize: 11, labelLimit: 320 },
  legend: { labelFontSize: 11, titleFontSize: 11, orient: 'bottom' as const },
};

/**
 * Horizontal grouped bars: one band per `category`, one bar per `series` inside it (colour and legend),
 * values labelled at the bar's end. `log` when values span orders of magnitude (throughput of bare Koa beside a slide image).
 */
export function groupedBars(
  name: string,
  caption: Caption,
  rows: { category: string; series: string; value: number }[],
  options: { unit: string; log?: boolean; width?: number; seriesOrder?: string[]; categoryOrder?: string[] },
): Chart {
  const scale = options.log ? { type: 'log' as const } : { zero: true };
  const format = options.log ? ',.3~s' : ',.4~r';
  const sort = options.seriesOrder ?? null;
  const y = { field: 'category', type: 'nominal' as const, title: null, sort: options.categoryOrder ?? null };
  const yOffset = { field: 'series', type: 'nominal' as const, sort };
  const data = rows.filter((r) => Number.isFinite(r.value) && (!options.log || r.value > 0));
  const series = new Set(data.map((r) => r.series)).size;
  const spec: TopLevelSpec = {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: header(caption),
    config: CONFIG,
    data: { values: data },
    width: options.width ?? 480,
    // Bars keep one height whatever the number of series: each category is as tall as its bars.
    height: { step: Math.max(12, 14 * series) },
    encoding: { y: { ...y, axis: { labelFontWeight: 'bold' } }, yOffset },
    layer: [
      {
        mark: { type: 'bar' },
        encoding: {
          x: { field: 'value', type: 'quantitative', title: options.unit, scale },
          color: { field: 'series', type: 'nominal', title: null, sort },
        },
      },
      {
        mark: { type: 'text', align: 'left', dx: 3, fontSize: 10 },
        encoding: {
          x: { field: 'value', type: 'quantitative', scale },
          text: { field: 'value', type: 'quantitative', format },
        },
      },
    ],
  };
  return { name, title: caption.title, spec };
}

/** Renders a chart to an SVG document. */
export async function toSvg(chart: Chart): Promise<string> {
  const view = new vega.View(vega.parse(compile(chart.spec).spec), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}
