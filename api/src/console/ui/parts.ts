import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import { allApps, type Json } from './api.ts';
import { CopyButton } from './copy.ts';

/** Pieces more than one view shows. */

export function managedLabel(managed: Json): string {
  if (!managed) return 'this console';
  return `${managed.kind} ${managed.namespace ? `${managed.namespace}/` : ''}${managed.name}`;
}

/** A duration as people say it: "at once", "10 minutes", "1 day". */
export function spoken(seconds: number): string {
  if (!(seconds > 0)) return 'at once';
  const units: [number, string][] = [
    [86_400, 'day'],
    [3_600, 'hour'],
    [60, 'minute'],
    [1, 'second'],
  ];
  const [size, unit] = units.find(([s]) => seconds % s === 0 && seconds >= s) ?? [1, 'second'];
  const n = seconds / size;
  return `${n} ${unit}${n === 1 ? '' : 's'}`;
}

/** A secret made just now: shown once, with the instruction to store it, and the app's current key. */
export function SecretNotice(props: { app: Json; appKey?: string; onDone: () => void }) {
  const key = props.appKey ?? props.app.app_key;
  return html`<div class="secret" role="status">
    <p><strong>App secret for ${props.app.name}, shown only this once:</strong> store it now; the server keeps only its hash.</p>
    <p><code class="secret-value">${props.app.app_secret}</code> <${CopyButton} text=${props.app.app_secret} label="app secret" /></p>
    <p>App key: <code class="secret-key">${key}</code> <${CopyButton} text=${key} label="app key" /></p>
    <button type="button" onClick=${props.onDone}>I have stored it</button>
  </div>`;
}

/** App names by key (current and previous keys), for the views that list keys. */
export function useAppNames(): Map<string, string> {
  const [names, setNames] = useState(new Map<string, string>());
  useEffect(() => {
    allApps()
      .then((apps) => {
        const map = new Map<string, string>();
        for (const a of apps) {
          map.set(a.app_key, a.name);
          if (a.previous_app_key) map.set(a.previous_app_key, a.name);
        }
        setNames(map);
      })
      .catch(() => undefined);
  }, []);
  return names;
}

export function DecisionTable(props: { decisions: Json[] | null; names?: Map<string, string> }) {
  if (props.decisions === null) return html`<p>Loading…</p>`;
  if (props.decisions.length === 0) return html`<p>No decisions yet.</p>`;
  return html`<table>
    <caption class="visually-hidden">Risk decisions</caption>
    <thead><tr><th scope="col">Time</th><th scope="col">App</th><th scope="col">Action</th><th scope="col">IP</th>
      <th scope="col">Score</th><th scope="col">Tier</th><th scope="col">Reasons</th></tr></thead>
    <tbody>
      ${props.decisions.map((d) => {
        const name = props.names?.get(d.app_key);
        return html`<tr>
          <td>${d.at.slice(11, 19)}</td>
          <td>${name ? html`<a href=${`#/apps/${d.app_key}`}>${name}</a>` : html`<code>${d.app_key}</code>`}</td>
          <td>${d.action}</td><td>${d.ip}</td>
          <td>${d.score}</td><td>${d.tier}</td><td>${d.reasons.join(', ') || 'none'}</td>
        </tr>`;
      })}
    </tbody>
  </table>`;
}
