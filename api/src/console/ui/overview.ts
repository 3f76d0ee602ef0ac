import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import { api, type Json, showError } from './api.ts';

/**
 * Every app at a glance over the last 24 hours: challenges, solve rate, validations passed and refused,
 * with the totals across apps first. A row links to the app's page.
 */
type Counts = Record<string, number>;

const sumOf = (counts: Counts, prefix: string) =>
  Object.entries(counts).reduce((n, [m, c]) => (m.startsWith(prefix) ? n + c : n), 0);

function figures(counts: Counts) {
  const solved = counts['submit.solved'] ?? 0;
  const failed = counts['submit.failed'] ?? 0;
  const validations = sumOf(counts, 'validate.');
  const passed = counts['validate.valid'] ?? 0;
  return {
    challenges: sumOf(counts, 'challenge.'),
    rejected: counts['challenge.reject'] ?? 0,
    solveRate: solved + failed ? `${Math.round((100 * solved) / (solved + failed))} %` : 'n/a',
    passed,
    refused: validations - passed,
  };
}

const n = (v: number) => v.toLocaleString('en-US');

export function Overview() {
  const [data, setData] = useState<Json | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    api('GET', '/admin/v1/usage?hours=24').then(setData).catch(showError(setError));
  }, []);
  const all = data && figures(data.totals);
  return html`<section aria-labelledby="overview-title">
    <h2 id="overview-title">Overview</h2>
    <p class="hint">The last 24 hours, across every app (counted by every API instance).</p>
    ${error && html`<p role="alert" class="error">${error}</p>`}
    ${
      all &&
      html`<dl class="tiles">
        <div><dt>Apps</dt><dd>${n(data.apps.length)}</dd></div>
        <div><dt>Challenges</dt><dd>${n(all.challenges)}</dd></div>
        <div><dt>Solve rate</dt><dd>${all.solveRate}</dd></div>
        <div><dt>Validations passed</dt><dd>${n(all.passed)}</dd></div>
        <div><dt>Validations refused</dt><dd>${n(all.refused)}</dd></div>
      </dl>`
    }
    ${
      data === null
        ? !error && html`<p>Loading…</p>`
        : data.apps.length === 0
          ? html`<p>No apps yet: create one under <a href="#/apps">Apps</a>.</p>`
          : html`<table>
            <caption class="visually-hidden">Usage per app, last 24 hours</caption>
            <thead><tr><th scope="col">App</th><th scope="col">Status</th><th scope="col" class="num">Challenges</th>
              <th scope="col" class="num">Rejected</th><th scope="col" class="num">Solve rate</th>
              <th scope="col" class="num">Validations passed</th><th scope="col" class="num">Refused</th></tr></thead>
            <tbody>
              ${data.apps.map((a: Json) => {
                const f = figures(a.counts);
                return html`<tr>
                  <th scope="row"><a href=${`#/apps/${a.app_key}`}>${a.name}</a></th>
                  <td>${a.disabled ? 'disabled' : 'enabled'}${a.test_mode ? ', test mode' : ''}</td>
                  <td class="num">${n(f.challenges)}</td><td class="num">${n(f.rejected)}</td>
                  <td class="num">${f.solveRate}</td><td class="num">${n(f.passed)}</td><td class="num">${n(f.refused)}</td>
                </tr>`;
              })}
            </tbody>
          </table>`
    }
  </section>`;
}
