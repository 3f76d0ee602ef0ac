import { html } from 'htm/preact';
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import { cssColor, useThemeVersion } from './theme.ts';

export interface Series {
  label: string;
  values: number[];
  color: string;
}

const axis = () => ({ stroke: cssColor('--muted'), grid: { stroke: cssColor('--line'), width: 1 } });

/**
 * One time chart (uPlot on a canvas). The canvas is described for screen readers by the figure's caption
 * and a table of totals beside it, so no number is only in a picture.
 */
export function TimeChart(props: { title: string; times: number[]; series: Series[] }) {
  const target = useRef<HTMLDivElement>(null);
  const theme = useThemeVersion();
  useEffect(() => {
    if (!target.current) return;
    const width = Math.max(280, Math.min(560, target.current.clientWidth || 560));
    const plot = new uPlot(
      {
        width,
        height: 180,
        series: [{}, ...props.series.map((s) => ({ label: s.label, stroke: s.color, width: 2 }))],
        // Axis labels and grid in the page's colours, so the chart reads in the dark theme too.
        axes: [axis(), { ...axis(), size: 48 }],
        legend: { show: false },
        cursor: { show: true },
      },
      [props.times, ...props.series.map((s) => s.values)],
      target.current,
    );
    return () => plot.destroy();
  }, [props.times, props.series, theme]);
  const id = `chart-${props.title.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`;
  return html`<figure class="chart" aria-labelledby=${id}>
    <figcaption id=${id}>${props.title}</figcaption>
    <div ref=${target} class="plot" aria-hidden="true"></div>
    <table class="totals">
      <caption class="visually-hidden">${props.title}: totals over the period</caption>
      <tbody>
        ${props.series.map(
          (s) => html`<tr>
            <th scope="row"><span class="swatch" style=${{ background: s.color }}></span>${s.label}</th>
            <td>${s.values.reduce((a, b) => a + b, 0).toLocaleString('en-US')}</td>
          </tr>`,
        )}
      </tbody>
    </table>
  </figure>`;
}
