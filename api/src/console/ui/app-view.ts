import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';
import { api, type Json, showError } from './api.ts';
import { ConfirmDialog } from './confirm.ts';
import { CopyButton } from './copy.ts';
import { EmbedSnippets } from './embed.ts';
import { DecisionTable, managedLabel, SecretNotice, spoken } from './parts.ts';
import { UsageCharts } from './usage-charts.ts';

/** One app: its settings and risk policy (with a preview), its keys, its usage and its recent decisions. */

const KINDS = ['slide', 'click', 'select'] as const;
// The API's defaults (api/src/risk/policy.ts): the slide is opt-in.
const DEFAULT_POLICY = {
  invisible_below: 35,
  image_below: 70,
  high: 'hard',
  image_kinds: ['click', 'select'],
};

/** The form's state: every setting as the inputs hold it (text for numbers, so a field can be emptied). */
function formOf(app: Json) {
  const policy = { ...DEFAULT_POLICY, ...app.risk_policy };
  return {
    name: app.name as string,
    plan: app.plan as string,
    quota: '',
    overage: 'plan',
    subscription: (app.subscription_expires_at ?? '').slice(0, 10),
    server_token_required: app.server_token_required as boolean,
    test_mode: app.test_mode as boolean,
    pass_token_ttl: String(app.pass_token_ttl),
    client_ip_policy: app.client_ip_policy as string,
    allowed_domains: (app.allowed_domains as string[]).join(', '),
    invisible_below: String(policy.invisible_below),
    image_below: String(policy.image_below),
    high: policy.high as string,
    image_kinds: policy.image_kinds as string[],
    other_policy: JSON.stringify(otherFields(app.risk_policy), null, 2),
  };
}
type Form = ReturnType<typeof formOf>;

const TIER_FIELDS = ['invisible_below', 'image_below', 'high', 'image_kinds'];

/** The policy fields the form has no input for (velocity, rate limits, reputation lists), edited as JSON. */
function otherFields(policy: Json): Json {
  return Object.fromEntries(Object.entries(policy ?? {}).filter(([k]) => !TIER_FIELDS.includes(k)));
}

/** The other fields as typed; undefined when the text is not a JSON object (the form says so). */
function parseOther(text: string): Json | undefined {
  try {
    const value = JSON.parse(text.trim() || '{}');
    return value && typeof value === 'object' && !Array.isArray(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/** The risk policy the form describes: the other fields as typed, then the tier fields. */
function policyOf(app: Json, f: Form) {
  return {
    ...(parseOther(f.other_policy) ?? otherFields(app.risk_policy)),
    invisible_below: Number(f.invisible_below),
    image_below: Number(f.image_below),
    high: f.high,
    image_kinds: f.image_kinds,
  };
}

function patchOf(app: Json, f: Form) {
  const patch: Json = {
    name: f.name.trim(),
    plan: f.plan,
    server_token_required: f.server_token_required,
    test_mode: f.test_mode,
    pass_token_ttl: Number(f.pass_token_ttl),
    client_ip_policy: f.client_ip_policy,
    allowed_domains: f.allowed_domains
      .split(',')
      .map((d) => d.trim())
      .filter(Boolean),
    subscription_expires_at: f.subscription ? `${f.subscription}T00:00:00Z` : null,
    risk_policy: policyOf(app, f),
  };
  if (f.quota !== '') patch.monthly_quota = Number(f.quota);
  if (f.overage !== 'plan') patch.overage_allowed = f.overage === 'yes';
  return patch;
}

/** `onKeyRotated` tells the shell that the app now lives at a new key (the page follows it, keeping its state). */
export function AppView(props: { appKey: string; back: () => void; onKeyRotated: (key: string) => void }) {
  const [app, setApp] = useState<Json | null>(null);
  const [form, setForm] = useState<Form | null>(null);
  const [message, setMessage] = useState<{ text: string; error: boolean } | null>(null);
  const [secret, setSecret] = useState<Json | null>(null);
  const [grace, setGrace] = useState('86400');
  const [keyGrace, setKeyGrace] = useState('86400');
  const [confirming, setConfirming] = useState<'secret' | 'key' | 'disable' | null>(null);
  const load = () =>
    api('GET', `/admin/v1/apps/${props.appKey}`).then((a) => {
      setApp(a);
      setForm(formOf(a));
    });
  useEffect(() => void load().catch((e) => setMessage({ text: e.message, error: true })), [props.appKey]);
  if (!app || !form) return html`<p>${message?.text ?? 'Loading…'}</p>`;

  const managed = app.managed_by !== null;
  const set = (field: keyof Form) => (e: Event) => {
    const input = e.target as HTMLInputElement;
    setForm({ ...form, [field]: input.type === 'checkbox' ? input.checked : input.value });
  };
  const toggleKind = (kind: string) => (e: Event) => {
    const on = (e.target as HTMLInputElement).checked;
    setForm({
      ...form,
      image_kinds: on ? [...form.image_kinds, kind] : form.image_kinds.filter((k) => k !== kind),
    });
  };
  const act = async (run: () => Promise<Json>, done: string) => {
    try {
      const answer = await run();
      if (answer?.app_secret) setSecret(answer);
      setMessage({ text: done, error: false });
      await load();
    } catch (e) {
      setMessage({ text: (e as Error).message, error: true });
    }
  };
  // The page follows the app to its new key (the old one may already have stopped: grace 0).
  const rotateKey = async () => {
    try {
      const answer = await api('POST', `/admin/v1/apps/${app.app_key}/rotate-key`, {
        grace_seconds: Number(keyGrace),
      });
      setApp(answer);
      props.onKeyRotated(answer.app_key);
      setMessage({ text: `New key issued: ${answer.app_key}.`, error: false });
      location.hash = `#/apps/${answer.app_key}`;
    } catch (e) {
      setMessage({ text: (e as Error).message, error: true });
    }
  };
  const save = (e: Event) => {
    e.preventDefault();
    if (parseOther(form.other_policy) === undefined) {
      setMessage({ text: 'Other policy fields must be a JSON object.', error: true });
      return;
    }
    void act(() => api('PATCH', `/admin/v1/apps/${app.app_key}`, patchOf(app, form)), 'Settings saved.');
  };
  const field = (id: string, label: string, input: unknown, hint?: string) =>
    html`<div class="field"><label for=${id}>${label}</label>${input}${hint && html`<p class="hint" id=${`${id}-hint`}>${hint}</p>`}</div>`;

  return html`<section aria-labelledby="app-title">
    <p><a href="#/apps" onClick=${(e: Event) => {
      e.preventDefault();
      props.back();
    }}>← All apps</a></p>
    <h2 id="app-title">${app.name}</h2>
    <p><code>${app.app_key}</code> <${CopyButton} text=${app.app_key} label="app key" /> · ${app.disabled ? 'disabled' : 'enabled'} · plan ${app.effective_plan}</p>
    ${
      managed &&
      html`<p class="managed" role="note">Declared by the Kubernetes custom resource <strong>${managedLabel(app.managed_by)}</strong>:
        its settings are changed there, and shown here read-only.</p>`
    }
    ${message && html`<p role=${message.error ? 'alert' : 'status'} class=${message.error ? 'error' : 'ok'}>${message.text}</p>`}
    ${secret && html`<${SecretNotice} app=${secret} appKey=${app.app_key} onDone=${() => setSecret(null)} />`}

    <form onSubmit=${save}>
      <fieldset disabled=${managed}>
        <legend>Settings</legend>
        ${field('name', 'Name', html`<input id="name" required maxlength="100" value=${form.name} onInput=${set('name')} />`)}
        ${field(
          'plan',
          'Plan',
          html`<select id="plan" value=${form.plan} onChange=${set('plan')}>
          <option value="free">free</option><option value="pro">pro</option><option value="enterprise">enterprise</option></select>`,
        )}
        ${field('quota', 'Monthly quota override', html`<input id="quota" type="number" min="0" value=${form.quota} onInput=${set('quota')} aria-describedby="quota-hint" />`, `Empty keeps the current one (now ${app.monthly_quota.toLocaleString('en-US')}).`)}
        ${field(
          'overage',
          'Overage past the quota',
          html`<select id="overage" value=${form.overage} onChange=${set('overage')}>
          <option value="plan">unchanged (${app.overage_allowed ? 'allowed' : 'refused'})</option><option value="yes">allowed</option><option value="no">refused</option></select>`,
        )}
        ${field('subscription', 'Subscription until', html`<input id="subscription" type="date" value=${form.subscription} onInput=${set('subscription')} />`)}
        ${field('ttl', 'Pass token lifetime (seconds)', html`<input id="ttl" type="number" min="30" max="3600" value=${form.pass_token_ttl} onInput=${set('pass_token_ttl')} />`)}
        ${field(
          'client-ip',
          'Client IP mismatch',
          html`<select id="client-ip" value=${form.client_ip_policy} onChange=${set('client_ip_policy')}>
          <option value="report">report</option><option value="reject">reject</option></select>`,
        )}
        ${field('domains', 'Allowed domains', html`<input id="domains" value=${form.allowed_domains} onInput=${set('allowed_domains')} aria-describedby="domains-hint" />`, 'Comma-separated; empty allows any page.')}
        <div class="check"><input id="server-token" type="checkbox" checked=${form.server_token_required} onChange=${set('server_token_required')} />
          <label for="server-token">Server token required (challenges need a token from /v1/server/challenge/issue)</label></div>
        <div class="check"><input id="test-mode" type="checkbox" checked=${form.test_mode} onChange=${set('test_mode')} />
          <label for="test-mode">Test mode (always the invisible tier, trivial difficulty)</label></div>
      </fieldset>
      <fieldset disabled=${managed}>
        <legend>Risk policy</legend>
        ${field('invisible-below', 'Invisible below score', html`<input id="invisible-below" type="number" min="0" max="101" value=${form.invisible_below} onInput=${set('invisible_below')} />`)}
        ${field('image-below', 'Image challenge below score', html`<input id="image-below" type="number" min="0" max="101" value=${form.image_below} onInput=${set('image_below')} />`)}
        ${field(
          'high',
          'Above: high tier',
          html`<select id="high" value=${form.high} onChange=${set('high')}>
          <option value="hard">hard (proof-of-work and an image)</option><option value="reject">reject</option></select>`,
        )}
        <fieldset class="kinds"><legend>Image challenge kinds</legend>
          ${KINDS.map(
            (
              k,
            ) => html`<div class="check"><input id=${`kind-${k}`} type="checkbox" checked=${form.image_kinds.includes(k)} onChange=${toggleKind(k)} />
              <label for=${`kind-${k}`}>${k}</label></div>`,
          )}
        </fieldset>
        <div class="field"><label for="other-policy">Other policy fields (JSON)</label>
          <textarea id="other-policy" rows="4" spellcheck="false" aria-describedby="other-policy-hint" value=${form.other_policy} onInput=${set('other_policy')}></textarea>
          <p class="hint" id="other-policy-hint">velocity, rate_limit, reputation (docs/cli.md lists them); {} for the defaults.</p></div>
      </fieldset>
      ${!managed && html`<button type="submit">Save settings</button>`}
    </form>

    <${Preview} app=${app} policy=${policyOf(app, form)} />

    ${
      !managed &&
      html`<section aria-labelledby="keys-title">
        <h3 id="keys-title">Keys</h3>
        <div class="inline">
          <label for="grace">Old secret keeps working for (seconds)</label>
          <input id="grace" type="number" min="0" max="2592000" value=${grace} onInput=${(e: Event) => setGrace((e.target as HTMLInputElement).value)} />
          <button type="button" onClick=${() => setConfirming('secret')}>Rotate secret</button>
        </div>
        <p>${app.secret_rotation_grace_until ? `The previous secret works until ${app.secret_rotation_grace_until}.` : 'No previous secret is valid.'}</p>
        <div class="inline">
          <label for="key-grace">Old key keeps working for (seconds)</label>
          <input id="key-grace" type="number" min="0" max="2592000" value=${keyGrace} onInput=${(e: Event) => setKeyGrace((e.target as HTMLInputElement).value)} />
          <button type="button" onClick=${() => setConfirming('key')}>Rotate key</button>
        </div>
        <p class="app-key">Key: <code>${app.app_key}</code>. ${
          app.previous_app_key
            ? html`The previous key <code>${app.previous_app_key}</code> works until ${app.key_rotation_grace_until}.`
            : 'No previous key is valid.'
        }</p>
        <button type="button" class="danger" onClick=${() =>
          app.disabled
            ? act(() => api('POST', `/admin/v1/apps/${app.app_key}/enable`), 'Enabled.')
            : setConfirming('disable')}>${app.disabled ? 'Enable app' : 'Disable app'}</button>
      </section>`
    }
    ${
      confirming &&
      html`<${Confirmation} app=${app} what=${confirming} grace=${Number(confirming === 'key' ? keyGrace : grace)}
        onCancel=${() => setConfirming(null)}
        onConfirm=${() => {
          const what = confirming;
          setConfirming(null);
          if (what === 'key') void rotateKey();
          else if (what === 'secret')
            void act(
              () =>
                api('POST', `/admin/v1/apps/${app.app_key}/rotate-secret`, { grace_seconds: Number(grace) }),
              'New secret issued.',
            );
          else
            void act(
              () => api('POST', `/admin/v1/apps/${app.app_key}/disable`),
              'Disabled: its credentials answer app_disabled.',
            );
        }} />`
    }

    <${EmbedSnippets} app=${app} />

    <${UsageCharts} appKey=${app.app_key} monthlyQuota=${app.monthly_quota} />
    <${AppDecisions} appKey=${app.app_key} names=${new Map([
      [app.app_key, app.name],
      ...(app.previous_app_key ? [[app.previous_app_key, app.name] as [string, string]] : []),
    ])} />
  </section>`;
}

/** The question before an action that breaks something, naming what breaks and when. */
function Confirmation(props: {
  app: Json;
  what: 'secret' | 'key' | 'disable';
  grace: number;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const { app, what, grace } = props;
  const when = grace > 0 ? `in ${spoken(grace)}` : 'at once';
  const text = {
    secret: {
      title: `Rotate the secret of ${app.name}?`,
      action: 'Rotate secret now',
      body: html`<p>A new secret is issued and shown once. The current secret stops working <strong>${when}</strong>:
        from then on every server still using it gets <code>invalid_app_secret</code> at /v1/validate and the
        siteverify URLs, so its logins and forms stop passing until it has the new secret.</p>`,
    },
    key: {
      title: `Rotate the key of ${app.name}?`,
      action: 'Rotate key now',
      body: html`<p>The app gets a new public key. The current key <code>${app.app_key}</code> stops working <strong>${when}</strong>: from then on pages and mobile apps embedding it cannot start a challenge, and
        servers sending it get <code>invalid_app_key</code>, until they carry the new key.</p>`,
    },
    disable: {
      title: `Disable ${app.name}?`,
      action: 'Disable app now',
      body: html`<p>At once, its key and secret answer <code>app_disabled</code>: widgets cannot start a
        challenge and validations fail, so every login and form it protects stops passing until it is enabled
        again.</p>`,
    },
  }[what];
  return html`<${ConfirmDialog} title=${text.title} action=${text.action} danger=${what === 'disable'}
    onConfirm=${props.onConfirm} onCancel=${props.onCancel}>${text.body}<//>`;
}

/** What a visitor would get under the policy as the form holds it (not yet saved). */
function Preview(props: { app: Json; policy: Json }) {
  const [visitor, setVisitor] = useState({
    ip: '203.0.113.7',
    user_agent: navigator.userAgent,
    webdriver: false,
    server_token: false,
  });
  const [result, setResult] = useState<Json | null>(null);
  const [error, setError] = useState<string | null>(null);
  const run = async (e: Event) => {
    e.preventDefault();
    try {
      setError(null);
      setResult(
        await api('POST', '/admin/v1/risk/preview', {
          app_key: props.app.app_key,
          risk_policy: props.policy,
          ip: visitor.ip,
          user_agent: visitor.user_agent,
          accept_language: 'en',
          server_token: visitor.server_token,
          ...(visitor.webdriver ? { signals: { webdriver: true } } : {}),
        }),
      );
    } catch (err) {
      setError((err as Error).message);
    }
  };
  const set = (field: string) => (e: Event) => {
    const input = e.target as HTMLInputElement;
    setVisitor({ ...visitor, [field]: input.type === 'checkbox' ? input.checked : input.value });
  };
  return html`<section aria-labelledby="preview-title">
    <h3 id="preview-title">Preview: what would this visitor get?</h3>
    <form class="preview" onSubmit=${run}>
      <div class="field"><label for="pv-ip">IP address</label><input id="pv-ip" value=${visitor.ip} onInput=${set('ip')} /></div>
      <div class="field"><label for="pv-ua">User agent</label><input id="pv-ua" value=${visitor.user_agent} onInput=${set('user_agent')} /></div>
      <div class="check"><input id="pv-webdriver" type="checkbox" checked=${visitor.webdriver} onChange=${set('webdriver')} /><label for="pv-webdriver">Automation reported (webdriver)</label></div>
      <div class="check"><input id="pv-server-token" type="checkbox" checked=${visitor.server_token} onChange=${set('server_token')} /><label for="pv-server-token">Presents a server token</label></div>
      <button type="submit">Preview</button>
    </form>
    ${error && html`<p role="alert" class="error">${error}</p>`}
    ${
      result &&
      html`<div class="result" role="status">
        <p>Score <strong>${result.score}</strong> → <strong>${result.tier}</strong>${result.image_kinds.length ? ` (one of: ${result.image_kinds.join(', ')})` : ''}${result.test_mode ? ' — test mode forces the invisible tier' : ''}.</p>
        <p>Reasons: ${result.reasons.join(', ') || 'none (base score)'}</p>
      </div>`
    }
  </section>`;
}

function AppDecisions(props: { appKey: string; names: Map<string, string> }) {
  const [decisions, setDecisions] = useState<Json[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    api('GET', `/admin/v1/risk/decisions?limit=20&app_key=${props.appKey}`)
      .then((d) => setDecisions(d.decisions))
      .catch(showError(setError));
  }, [props.appKey]);
  return html`<section aria-labelledby="app-decisions-title">
    <h3 id="app-decisions-title">Recent risk decisions</h3>
    ${error && html`<p role="alert" class="error">${error}</p>`}
    <${DecisionTable} decisions=${decisions} names=${props.names} />
  </section>`;
}
