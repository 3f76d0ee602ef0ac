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
const FORMAT = ',.4~r';

/**
 * The value axis. Bars grow from zero, which a log scale does not have: there they grow from the power of
 * ten at or below the smallest value, and the scale starts there.
 */
function valueAxis(values: number[], unit: string, log: boolean | undefined) {
  if (!log)
    return { x: { field: 'value', type: 'quantitative' as const, title: unit, scale: { zero: true } } };
  const floor = 10 ** Math.floor(Math.log10(Math.min(...values.filter((v) => v > 0), 1)));
  return {
    x: {
      field: 'value',
      type: 'quantitative' as const,
      title: unit,
      scale: { type: 'log' as const, domainMin: floor },
    },
    x2: { datum: floor },
  };
}

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
  axis: { labelFontSize: 11, titleFontSize: 11, labelLimit: 420 },
  legend: { labelFontSize: 11, titleFontSize: 11, orient: 'bottom' as const, labelLimit: 320 },
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
  const sort = options.seriesOrder ?? null;
  const y = { field: 'category', type: 'nominal' as const, title: null, sort: options.categoryOrder ?? null };
  const yOffset = { field: 'series', type: 'nominal' as const, sort };
  const data = rows.filter((r) => Number.isFinite(r.value) && (!options.log || r.value > 0));
  const series = new Set(data.map((r) => r.series)).size;
  const axis = valueAxis(
    data.map((r) => r.value),
    options.unit,
    options.log,
  );
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
        encoding: { ...axis, color: { field: 'series', type: 'nominal', title: null, sort } },
      },
      {
        mark: { type: 'text', align: 'left', dx: 3, fontSize: 10 },
        encoding: { x: axis.x, text: { field: 'value', type: 'quantitative', format: FORMAT } },
      },
    ],
  };
  return { name, title: caption.title, spec };
}

/**
 * Horizontal bars, one per `label` in the given order, coloured by `group` (with a legend): for cases whose
 * names already say what they are, compared across groups (servers).
 */
export function labelledBars(
  name: string,
  caption: Caption,
  rows: { label: string; group: string; value: number }[],
  options: { unit: string; log?: boolean; width?: number; groupOrder?: string[] },
): Chart {
  const data = rows.filter((r) => Number.isFinite(r.value) && (!options.log || r.value > 0));
  const axis = valueAxis(
    data.map((r) => r.value),
    options.unit,
    options.log,
  );
  const y = { field: 'label', type: 'nominal' as const, title: null, sort: data.map((r) => r.label) };
  const spec: TopLevelSpec = {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: header(caption),
    config: CONFIG,
    data: { values: data },
    width: options.width ?? 480,
    height: { step: 18 },
    encoding: { y },
    layer: [
      {
        mark: { type: 'bar' },
        encoding: {
          ...axis,
          color: { field: 'group', type: 'nominal', title: null, sort: options.groupOrder ?? null },
        },
      },
      {
        mark: { type: 'text', align: 'left', dx: 3, fontSize: 10 },
        encoding: { x: axis.x, text: { field: 'value', type: 'quantitative', format: FORMAT } },
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
