import { type ChallengeUi, type LoaderKey, UI_GLOBAL } from './contract.ts';
import { translator } from './i18n.ts';
import { I18N_GLOBAL } from './i18n-table.ts';

/*
 * The lazily loaded parts. Their file names carry a content hash (cacheable forever), and build.ts writes
 * them in here at build time; the fallbacks are for running the sources unbundled.
 */
declare const __GATEHOUSE_UI_FILE__: string | undefined;
declare const __GATEHOUSE_WORKER_FILE__: string | undefined;
export const UI_FILE = typeof __GATEHOUSE_UI_FILE__ === 'string' ? __GATEHOUSE_UI_FILE__ : 'gatehouse-ui.js';
declare const __GATEHOUSE_I18N_FILE__: string | undefined;
const I18N_FILE = typeof __GATEHOUSE_I18N_FILE__ === 'string' ? __GATEHOUSE_I18N_FILE__ : 'gatehouse-i18n.js';
export const WORKER_FILE =
  typeof __GATEHOUSE_WORKER_FILE__ === 'string' ? __GATEHOUSE_WORKER_FILE__ : 'gatehouse-pow.js';

/** The loader's own script element, read once while it runs (currentScript is null afterwards). */
const script = document.currentScript as HTMLScriptElement | null;
/** Where gatehouse.js came from: the chunks sit beside it, and it is the default API server. */
export const scriptUrl = new URL(script?.src || location.href, location.href);
const nonce = script?.nonce;

/** Absolute URL of a file beside gatehouse.js. */
export function chunkUrl(file: string): string {
  return new URL(file, scriptUrl).href;
}

declare const __GATEHOUSE_SRI__: Record<string, string> | undefined;
/** Subresource Integrity of each lazily loaded file, by name (build.ts); none when running the sources. */
const SRI: Record<string, string> = typeof __GATEHOUSE_SRI__ === 'object' ? __GATEHOUSE_SRI__ : {};
/** A host that swallows packets costs at most this long before the next one is tried. */
const CHUNK_TIMEOUT_MS = 8000;

/**
 * Where a lazily loaded file may come from, in order: beside gatehouse.js, then `/widget/` on each host
 * (the main API first, then the standby hosts, which serve the same files).
 */
export function chunkUrls(file: string, hosts: string[] = []): string[] {
  return [...new Set([chunkUrl(file), ...hosts.map((h) => `${h.replace(/\/+$/, '')}/widget/${file}`)])];
}

/**
 * Runs a classic script (it needs no CORS headers when no integrity is known, unlike a cross-origin
 * import()) from the first URL that serves the expected bytes: with the build's SRI hash a wrong or
 * tampered file fails like a dead host, and the next URL is tried.
 */
function loadScript(file: string, hosts: string[], done: () => boolean): Promise<void> {
  const urls = chunkUrls(file, hosts);
  return new Promise((resolve, reject) => {
    const attempt = (i: number) => {
      const url = urls[i];
      if (!url) return reject(unreachable(file, urls));
      const el = document.createElement('script');
      el.src = url;
      el.async = true;
      if (nonce) el.nonce = nonce;
      const integrity = SRI[file];
      if (integrity) {
        el.integrity = integrity;
        el.crossOrigin = 'anonymous';
      }
      let settled = false;
      const next = () => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (done()) return resolve();
        attempt(i + 1);
      };
      const timer = setTimeout(next, CHUNK_TIMEOUT_MS);
      el.onload = () => {
        settled = true;
        clearTimeout(timer);
        resolve();
      };
      el.onerror = () => {
        el.remove();
        next();
      };
      document.head.appendChild(el);
    };
    attempt(0);
  });
}

const unreachable = (file: string, urls: string[]) =>
  new Error(`cannot load ${file} (tried ${urls.join(', ')})`);

/** A lazily loaded file's bytes from the first URL that serves the expected ones (the worker's source). */
export async function fetchChunk(file: string, hosts: string[], signal: AbortSignal): Promise<Blob> {
  const urls = chunkUrls(file, hosts);
  for (const url of urls) {
    const own = new AbortController();
    const abort = () => own.abort();
    signal.addEventListener('abort', abort);
    const timer = setTimeout(abort, CHUNK_TIMEOUT_MS);
    try {
      const res = await fetch(url, { integrity: SRI[file] ?? '', credentials: 'omit', signal: own.signal });
      if (res.ok) return await res.blob();
    } catch (error) {
      if (signal.aborted) throw error;
    } finally {
      clearTimeout(timer);
      signal.removeEventListener('abort', abort);
    }
  }
  throw unreachable(file, urls);
}

const loaded = new Map<string, Promise<unknown>>();

/**
 * Runs a lazily loaded file once (from the first host that serves it) and answers what it registers on its
 * global; a failure is forgotten, so the next call tries again.
 */
function loadRegistered<T>(file: string, global: string, hosts: string[]): Promise<T> {
  const registered = () => (globalThis as Record<string, unknown>)[global] as T | undefined;
  let pending = loaded.get(file);
  if (!pending) {
    pending = (async () => {
      if (!registered()) await loadScript(file, hosts, () => !!registered());
      const value = registered();
      if (!value) throw new Error(`${file} did not register`);
      return value;
    })().catch((error) => {
      loaded.delete(file);
      throw error;
    });
    loaded.set(file, pending);
  }
  return pending as Promise<T>;
}

/** Loads the challenge UI once, which registers itself on a global. */
export function loadUi(hosts: string[] = []): Promise<ChallengeUi> {
  return loadRegistered(UI_FILE, UI_GLOBAL, hosts);
}

/**
 * The translator for `lang`, after loading the language pack (i18n-pack.ts) once, as a classic script
 * like the UI; English needs none.
 */
export function loadLanguage(lang: string, hosts: string[] = []): Promise<(key: LoaderKey) => string> {
  if (lang === 'en') return Promise.resolve(translator());
  return loadRegistered<Record<string, string>>(I18N_FILE, I18N_GLOBAL, hosts).then((table) =>
    translator(table[lang]),
  );
}
