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

let ui: Promise<ChallengeUi> | undefined;

/**
 * Loads the challenge UI once, as a classic script (it needs no CORS headers, unlike a cross-origin
 * import()), which registers itself on a global.
 */
export function loadUi(): Promise<ChallengeUi> {
  ui ??= new Promise<ChallengeUi>((resolve, reject) => {
    const registered = () => (globalThis as Record<string, unknown>)[UI_GLOBAL] as ChallengeUi | undefined;
    const ready = registered();
    if (ready) return resolve(ready);
    const el = document.createElement('script');
    el.src = chunkUrl(UI_FILE);
    el.async = true;
    if (nonce) el.nonce = nonce;
    el.onload = () => {
      const loaded = registered();
      loaded ? resolve(loaded) : reject(new Error('the challenge UI did not register'));
    };
    el.onerror = () => reject(new Error(`cannot load ${el.src}`));
    document.head.appendChild(el);
  }).catch((error) => {
    ui = undefined;
    throw error;
  });
  return ui;
}

type Table = Record<string, string>;
let pack: Promise<Table> | undefined;

/**
 * The translator for `lang`, after loading the language pack (i18n-pack.ts) once, as a classic script
 * like the UI; English needs none.
 */
export function loadLanguage(lang: string): Promise<(key: LoaderKey) => string> {
  if (lang === 'en') return Promise.resolve(translator());
  pack ??= new Promise<Table>((resolve, reject) => {
    const registered = () => (globalThis as Record<string, unknown>)[I18N_GLOBAL] as Table | undefined;
    const ready = registered();
    if (ready) return resolve(ready);
    const el = document.createElement('script');
    el.src = chunkUrl(I18N_FILE);
    el.async = true;
    if (nonce) el.nonce = nonce;
    el.onload = () => {
      const table = registered();
      table ? resolve(table) : reject(new Error('the language pack did not register'));
    };
    el.onerror = () => reject(new Error(`cannot load ${el.src}`));
    document.head.appendChild(el);
  }).catch((error) => {
    pack = undefined;
    throw error;
  });
  return pack.then((table) => translator(table[lang]));
}
