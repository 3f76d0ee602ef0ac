import { html } from 'htm/preact';
import type { Json } from './api.ts';

/** Pieces more than one view shows. */

export function managedLabel(managed: Json): string {
  if (!managed) return 'this console';
  return `${managed.kind} ${managed.namespace ? `${managed.namespace}/` : ''}${managed.name}`;
}

/** A secret made just now: shown once, with the instruction to store it. */
export function SecretNotice(props: { app: Json; onDone: () => void }) {
  return html`<div class="secret" role="status">
    <p><strong>App secret for ${props.app.name}, shown only this once:</strong> store it now; the server keeps only its hash.</p>
    <p><code class="secret-value">${props.app.app_secret}</code></p>
    <p>App key: <code>${props.app.app_key}</code></p>
    <button type="button" onClick=${props.onDone}>I have stored it</button>
  </div>`;
}

export function DecisionTable(props: { decisions: Json[] | null }) {
  if (props.decisions === null) return html`<p>Loading…</p>`;
  if (props.decisions.length === 0) return html`<p>No decisions yet.</p>`;
  return html`<table>
    <caption class="visually-hidden">Risk decisions</caption>
    <thead><tr><th scope="col">Time</th><th scope="col">App</th><th scope="col">Action</th><th scope="col">IP</th>
      <th scope="col">Score</th><th scope="col">Tier</th><th scope="col">Reasons</th></tr></thead>
    <tbody>
      ${props.decisions.map(
        (d) => html`<tr>
          <td>${d.at.slice(11, 19)}</td><td><code>${d.app_key}</code></td><td>${d.action}</td><td>${d.ip}</td>
          <td>${d.score}</td><td>${d.tier}</td><td>${d.reasons.join(', ') || 'none'}</td>
        </tr>`,
      )}
    </tbody>
  </table>`;
}
