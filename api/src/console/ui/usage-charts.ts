import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import { api, type Json, showError } from './api.ts';
import { type Series, TimeChart } from './charts.ts';

/** An app's usage over time, from the hourly rollups: what was asked, what was solved, what was validated. */

const COLORS = ['#1f5fbf', '#b35900', '#2e7d32', '#8e24aa', '#c62828', '#00796b', '#5d4037', '#455a64'];
const RANGES = [
  [24, 'Last 24 hours'],
  [24 * 7, 'Last 7 days'],
] as const;

/** Series for every metric under `prefix` that occurred in the period (so a chart shows what happened). */
function seriesOf(hours: Json[], metrics: [string, string][]): Series[] {
  return metrics
    .map(([metric, label], i) => ({
      label,
      values: hours.map((h) => h.counts[metric] ?? 0),
      color: COLORS[i % COLORS.length]!,
    }))
    .filter((s) => s.values.some((v) => v > 0));
}

function verdicts(hours: Json[]): [string, string][] {
  const names = new Set<string>();
  for (const h of hours) for (const m of Object.keys(h.counts)) if (m.startsWith('validate.')) names.add(m);
  return [...names].sort().map((m) => [m, m.slice('validate.'.length)]);
}

/** `monthlyQuota` is the app's as last loaded: a change of settings reloads the numbers. */
export function UsageCharts(props: { appKey: string; monthlyQuota: number }) {
  const [hours, setHours] = useState<number>(24);
  const [usage, setUsage] = useState<Json | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    api('GET', `/admin/v1/apps/${props.appKey}/usage?hours=${hours}`)
      .then(setUsage)
      .catch(showError(setError));
  }, [props.appKey, props.monthlyQuota, hours]);
  if (error) return html`<p role="alert" class="error">${error}</p>`;
  if (!usage) return html`<p>Loading usage…</p>`;
  const times = usage.hours.map((h: Json) => Date.parse(h.hour) / 1000);
  const charts: [string, Series[]][] = [
    [
      'Challenges by tier',
      seriesOf(usage.hours, [
        ['challenge.invisible', 'invisible'],
        ['challenge.image', 'image'],
        ['challenge.hard', 'hard'],
        ['challenge.reject', 'rejected'],
        ['challenge.degraded', 'degraded (quota)'],
      ]),
    ],
    [
      'Answers: solved and failed',
      seriesOf(usage.hours, [
        ['submit.solved', 'solved'],
        ['submit.failed', 'failed'],
      ]),
    ],
    ['Validations by verdict', seriesOf(usage.hours, verdicts(usage.hours))],
    [
      'Degraded and offline tokens validated',
      seriesOf(usage.hours, [
        ['token.dg', 'dg_ (degraded)'],
        ['token.offline', 'offline_ (standby)'],
      ]),
    ],
  ];
  const solved = sum(usage.hours, 'submit.solved');
  const failed = sum(usage.hours, 'submit.failed');
  const quota = usage.quota;
  return html`<section aria-labelledby="usage-title">
    <h3 id="usage-title">Usage</h3>
    <div class="inline">
      <label for="usage-range">Period</label>
      <select id="usage-range" value=${hours} onChange=${(e: Event) => setHours(Number((e.target as HTMLSelectElement).value))}>
        ${RANGES.map(([h, label]) => html`<option value=${h}>${label}</option>`)}
      </select>
    </div>
    <p>
      ${`Quota ${quota.period}: `}<strong>${quota.used.toLocaleString('en-US')}</strong>
      ${` of ${quota.monthly_quota.toLocaleString('en-US')} challenges `}
      <meter min="0" max=${quota.monthly_quota || 1} value=${quota.used} aria-label="Quota used"></meter>
      ${` · solve rate ${solved + failed ? `${Math.round((100 * solved) / (solved + failed))} %` : 'n/a'} (${solved} solved, ${failed} failed)`}
    </p>
    <div class="charts">
      ${charts.map(([title, series]) =>
        series.length
          ? html`<${TimeChart} title=${title} times=${times} series=${series} />`
          : html`<figure class="chart empty"><figcaption>${title}</figcaption><p>Nothing in this period.</p></figure>`,
      )}
    </div>
  </section>`;
}

function sum(hours: Json[], metric: string): number {
  return hours.reduce((total, h) => total + (h.counts[metric] ?? 0), 0);
}
