/**
 * gatehouse-i18n.<hash>.js: the loader's strings in every language, fetched by i18n.ts's loadLanguage
 * only for pages in a language other than English. Registers the table on a global, like the UI chunk.
 */
import { I18N_GLOBAL, TABLE } from './i18n-table.ts';

(globalThis as Record<string, unknown>)[I18N_GLOBAL] = TABLE;
