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

interface BarOptions {
  unit: string;
  /** When values span orders of magnitude (bare Koa's throughput beside a slide image's). */
  log?: boolean;
  width?: number;
}

/** Horizontal bars of `value`, coloured by `color`, labelled at their end; `encoding` places them on y. */
function bars(
  name: string,
  caption: Caption,
  data: Record<string, string | number>[],
  options: BarOptions & { color: string; colorSort: string[] | null; rowHeight: number; encoding: object },
): Chart {
  const axis = valueAxis(
    data.map((r) => Number(r.value)),
    options.unit,
    options.log,
  );
  const spec: TopLevelSpec = {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: header(caption),
    config: CONFIG,
    data: { values: data },
    width: options.width ?? 480,
    height: { step: options.rowHeight },
    encoding: options.encoding,
    layer: [
      {
        mark: { type: 'bar' },
        encoding: {
          ...axis,
          color: { field: options.color, type: 'nominal', title: null, sort: options.colorSort },
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

const plottable = <T extends { value: number }>(rows: T[], log?: boolean) =>
  rows.filter((r) => Number.isFinite(r.value) && (!log || r.value > 0));

/** Horizontal grouped bars: one band per `category`, one bar per `series` inside it (colour and legend). */
export function groupedBars(
  name: string,
  caption: Caption,
  rows: { category: string; series: string; value: number }[],
  options: BarOptions & { seriesOrder?: string[]; categoryOrder?: string[] },
): Chart {
  const data = plottable(rows, options.log);
  const sort = options.seriesOrder ?? null;
  const series = new Set(data.map((r) => r.series)).size;
  return bars(name, caption, data, {
    ...options,
    color: 'series',
    colorSort: sort,
    // Bars keep one height whatever the number of series: each category is as tall as its bars.
    rowHeight: Math.max(12, 14 * series),
    encoding: {
      y: {
        field: 'category',
        type: 'nominal',
        title: null,
        sort: options.categoryOrder ?? null,
        axis: { labelFontWeight: 'bold' },
      },
      yOffset: { field: 'series', type: 'nominal', sort },
    },
  });
}

/**
 * Horizontal bars, one per `label` in the given order, coloured by `group` (with a legend): for cases whose
 * names already say what they are, compared across groups (servers).
 */
export function labelledBars(
  name: string,
  caption: Caption,
  rows: { label: string; group: string; value: number }[],
  options: BarOptions & { groupOrder?: string[] },
): Chart {
  const data = plottable(rows, options.log);
  return bars(name, caption, data, {
    ...options,
    color: 'group',
    colorSort: options.groupOrder ?? null,
    rowHeight: 18,
    encoding: { y: { field: 'label', type: 'nominal', title: null, sort: data.map((r) => r.label) } },
  });
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
