import { html } from 'htm/preact';
import { render } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, api, appsPage, type Json, session, showError } from './api.ts';
import { AppView } from './app-view.ts';
import { Overview } from './overview.ts';
import { DecisionTable, managedLabel, SecretNotice, useAppNames } from './parts.ts';
import { applyStoredTheme, ThemeToggle } from './theme.ts';

/**
 * The console's shell: sign-in (the admin token exchanged for a session), then the apps, the recent risk decisions and the
 * standby hosts. Each view reads the admin API directly; nothing is cached between views.
 */

type View =
  | { name: 'overview' }
  | { name: 'apps' }
  | { name: 'app'; key: string }
  | { name: 'decisions' }
  | { name: 'standby' };

function SignIn(props: { onSignedIn: () => void; ended: boolean }) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    const field = (event.target as HTMLFormElement).elements.namedItem('admin-token') as HTMLInputElement;
    const token = field.value.trim();
    setBusy(true);
    try {
      await session.signIn(token);
      props.onSignedIn();
    } catch (e) {
      setError(
        e instanceof ApiError && e.status === 401
          ? 'That is not the admin token.'
          : e instanceof ApiError && e.status === 429
            ? e.message
            : String(e),
      );
    } finally {
      // The token is not kept, not even in the field.
      field.value = '';
      setBusy(false);
    }
  };
  return html`<main class="signin">
    <h1>Gatehouse console</h1>
    ${props.ended && !error && html`<p role="status" class="hint">Your session has ended. Sign in again.</p>`}
    <form onSubmit=${submit}>
      <label for="admin-token">Admin token</label>
      <input id="admin-token" name="admin-token" type="password" autocomplete="off" required spellcheck="false"
        data-1p-ignore data-lpignore="true" data-bwignore="true" />
      <p class="hint">GATEHOUSE_ADMIN_TOKEN, or the file DATA_DIR/admin-token on the server. It is sent once, to
        sign in, and kept nowhere in this browser: the session that follows lives in an HttpOnly cookie and
        ends at sign-out, after 30 minutes idle, or 12 hours after sign-in.</p>
      ${error && html`<p role="alert" class="error">${error}</p>`}
      <button type="submit" disabled=${busy}>Sign in</button>
    </form>
  </main>`;
}

function AppsList(props: { open: (key: string) => void }) {
  const [apps, setApps] = useState<Json[] | null>(null);
  /** Where the next page starts; null once every app is shown. */
  const [more, setMore] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [name, setName] = useState('');
  const [created, setCreated] = useState<Json | null>(null);
  const load = () =>
    appsPage()
      .then((page) => {
        setApps(page.apps);
        setMore(page.next_cursor);
      })
      .catch((e) => setError(String(e.message ?? e)));
  const showMore = () =>
    appsPage(more)
      .then((page) => {
        setApps((shown) => [...(shown ?? []), ...page.apps]);
        setMore(page.next_cursor);
      })
      .catch((e) => setError(String(e.message ?? e)));
  useEffect(() => void load(), []);
  const create = async (event: Event) => {
    event.preventDefault();
    try {
      setCreated(await api('POST', '/admin/v1/apps', { name: name.trim() }));
      setName('');
      await load();
    } catch (e) {
      setError((e as Error).message);
    }
  };
  return html`<section aria-labelledby="apps-title">
    <h2 id="apps-title">Apps</h2>
    ${error && html`<p role="alert" class="error">${error}</p>`}
    ${created && html`<${SecretNotice} app=${created} onDone=${() => setCreated(null)} />`}
    <form class="inline" onSubmit=${create}>
      <label for="new-app-name">New app name</label>
      <input id="new-app-name" required maxlength="100" value=${name}
        onInput=${(e: Event) => setName((e.target as HTMLInputElement).value)} />
      <button type="submit">Create app</button>
    </form>
    ${
      apps === null
        ? html`<p>Loading…</p>`
        : html`<table>
            <caption class="visually-hidden">Apps</caption>
            <thead><tr><th scope="col">Name</th><th scope="col">App key</th><th scope="col">Plan</th>
              <th scope="col">Status</th><th scope="col">Managed by</th></tr></thead>
            <tbody>
              ${apps.map(
                (a) => html`<tr>
                  <th scope="row"><a href=${`#/apps/${a.app_key}`} onClick=${(e: Event) => {
                    e.preventDefault();
                    props.open(a.app_key);
                  }}>${a.name}</a></th>
                  <td><code>${a.app_key}</code></td>
                  <td>${a.effective_plan}${a.effective_plan !== a.plan ? ` (${a.plan} expired)` : ''}</td>
                  <td>${a.disabled ? 'disabled' : 'enabled'}${a.test_mode ? ', test mode' : ''}</td>
                  <td>${managedLabel(a.managed_by)}</td>
                </tr>`,
              )}
            </tbody>
          </table>
          ${more && html`<button type="button" onClick=${showMore}>Show more apps</button>`}`
    }
  </section>`;
}

function Decisions() {
  const [decisions, setDecisions] = useState<Json[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const names = useAppNames();
  useEffect(() => {
    api('GET', '/admin/v1/risk/decisions?limit=100')
      .then((d) => setDecisions(d.decisions))
      .catch(showError(setError));
  }, []);
  return html`<section aria-labelledby="decisions-title">
    <h2 id="decisions-title">Recent risk decisions</h2>
    <p class="hint">The last challenges this API instance decided, newest first, with the rules that scored them.</p>
    ${error && html`<p role="alert" class="error">${error}</p>`}
    <${DecisionTable} decisions=${decisions} names=${names} />
  </section>`;
}

function Standby() {
  const [hosts, setHosts] = useState<Json[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    api('GET', '/admin/v1/standby/status')
      .then((d) => setHosts(d.hosts))
      .catch(showError(setError));
  }, []);
  return html`<section aria-labelledby="standby-title">
    <h2 id="standby-title">Standby</h2>
    <p class="hint">What each standby host published to clients says of itself. A host this API cannot reach is
      shown as unknown: that is all the API knows of it.</p>
    ${error && html`<p role="alert" class="error">${error}</p>`}
    ${
      hosts === null
        ? html`<p>Loading…</p>`
        : hosts.length === 0
          ? html`<p>No standby host is configured (STANDBY_BYPASS_URLS, STANDBY_FALLBACK_URLS).</p>`
          : html`<table>
              <caption class="visually-hidden">Standby hosts</caption>
              <thead><tr><th scope="col">Role</th><th scope="col">Region</th><th scope="col">URL</th>
                <th scope="col">Main API seen as</th><th scope="col">Mode</th><th scope="col">Serving</th></tr></thead>
              <tbody>
                ${hosts.map(
                  (s) => html`<tr>
                    <td>${s.role}</td><td>${s.region ?? 'unknown'}</td><td><code>${s.url}</code></td>
                    <td>${s.reachable ? (s.main ?? s.state ?? 'unknown') : 'unknown (unreachable)'}</td>
                    <td>${s.mode ?? 'unknown'}</td>
                    <td>${s.serving === undefined ? 'unknown' : s.serving ? 'yes' : 'no'}</td>
                  </tr>`,
                )}
              </tbody>
            </table>`
    }
  </section>`;
}

function routeFromHash(): View {
  const m = /^#\/apps\/(ak_[\w-]+)$/.exec(location.hash);
  if (m) return { name: 'app', key: m[1]! };
  if (location.hash === '#/overview') return { name: 'overview' };
  if (location.hash === '#/decisions') return { name: 'decisions' };
  if (location.hash === '#/standby') return { name: 'standby' };
  return { name: 'apps' };
}

function Console() {
  const [state, setState] = useState<'checking' | 'signed-in' | 'signed-out' | 'ended'>('checking');
  const [view, setView] = useState<View>(routeFromHash());
  // An app's page is one component per app, whatever key it had: a key rotation keeps the page (its
  // messages, the new secret), moving to another app starts afresh (no input carries over).
  const followed = useRef(new Map<string, string>());
  useEffect(() => {
    const onHash = () => setView(routeFromHash());
    window.addEventListener('hashchange', onHash);
    const off = session.onSignedOut(() => setState('ended'));
    session.resume().then((live) => setState(live ? 'signed-in' : 'signed-out'));
    return () => {
      window.removeEventListener('hashchange', onHash);
      off();
    };
  }, []);
  if (state === 'checking') return html`<p class="hint">Loading…</p>`;
  if (state !== 'signed-in')
    return html`<${SignIn} ended=${state === 'ended'} onSignedIn=${() => setState('signed-in')} />`;
  const go = (hash: string) => {
    location.hash = hash;
  };
  const nav = [
    ['#/overview', 'Overview', view.name === 'overview'],
    ['#/apps', 'Apps', view.name === 'apps' || view.name === 'app'],
    ['#/decisions', 'Risk decisions', view.name === 'decisions'],
    ['#/standby', 'Standby', view.name === 'standby'],
  ] as const;
  return html`<div class="layout">
    <header>
      <p class="brand">Gatehouse console</p>
      <nav aria-label="Console sections">
        <ul>
          ${nav.map(
            ([href, label, current]) =>
              html`<li><a href=${href} aria-current=${current ? 'page' : undefined}>${label}</a></li>`,
          )}
        </ul>
      </nav>
      <${ThemeToggle} />
      <button type="button" class="secondary" onClick=${() => {
        // An already-ended session signs out as well: the page forgets it either way.
        session
          .signOut()
          .catch(() => undefined)
          .then(() => setState('signed-out'));
      }}>Sign out</button>
    </header>
    <main>
      <h1 class="visually-hidden">Gatehouse console</h1>
      ${view.name === 'apps' && html`<${AppsList} open=${(key: string) => go(`#/apps/${key}`)} />`}
      ${view.name === 'overview' && html`<${Overview} />`}
      ${
        view.name === 'app' &&
        html`<${AppView} key=${followed.current.get(view.key) ?? view.key} appKey=${view.key} back=${() => go('#/apps')}
          onKeyRotated=${(key: string) => followed.current.set(key, followed.current.get(view.key) ?? view.key)} />`
      }
      ${view.name === 'decisions' && html`<${Decisions} />`}
      ${view.name === 'standby' && html`<${Standby} />`}
    </main>
  </div>`;
}

applyStoredTheme();
render(html`<${Console} />`, document.getElementById('console')!);
