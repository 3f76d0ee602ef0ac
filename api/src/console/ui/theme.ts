import { html } from 'htm/preact';
import { useEffect, useState } from 'preact/hooks';

/**
 * Light, dark, or as the system says (prefers-color-scheme, the default). The choice is the `data-theme`
 * attribute of <html> (console.css reads it) and is remembered in this browser's localStorage: a
 * preference, not a secret.
 */
type Theme = 'auto' | 'light' | 'dark';
const KEY = 'gatehouse.console.theme';

function stored(): Theme {
  try {
    const value = localStorage.getItem(KEY);
    return value === 'light' || value === 'dark' ? value : 'auto';
  } catch {
    return 'auto';
  }
}

const CHANGED = 'gatehouse-theme';

function apply(theme: Theme): void {
  if (theme === 'auto') document.documentElement.removeAttribute('data-theme');
  else document.documentElement.setAttribute('data-theme', theme);
  document.dispatchEvent(new Event(CHANGED));
}

/** A number that changes whenever the colours may have (a choice here, or the system's scheme). */
export function useThemeVersion(): number {
  const [version, setVersion] = useState(0);
  useEffect(() => {
    const bump = () => setVersion((v) => v + 1);
    const media = matchMedia('(prefers-color-scheme: dark)');
    document.addEventListener(CHANGED, bump);
    media.addEventListener('change', bump);
    return () => {
      document.removeEventListener(CHANGED, bump);
      media.removeEventListener('change', bump);
    };
  }, []);
  return version;
}

/** The value of one of console.css's colour variables, as the page shows it now. */
export function cssColor(name: string): string {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim();
}

/** Applied before the first render, so the page does not flash the other theme. */
export function applyStoredTheme(): void {
  apply(stored());
}

export function ThemeToggle() {
  const [theme, setTheme] = useState<Theme>(stored());
  const choose = (e: Event) => {
    const next = (e.target as HTMLSelectElement).value as Theme;
    setTheme(next);
    apply(next);
    try {
      if (next === 'auto') localStorage.removeItem(KEY);
      else localStorage.setItem(KEY, next);
    } catch {}
  };
  return html`<div class="theme">
    <label for="theme">Theme</label>
    <select id="theme" value=${theme} onChange=${choose}>
      <option value="auto">System</option><option value="light">Light</option><option value="dark">Dark</option>
    </select>
  </div>`;
}
