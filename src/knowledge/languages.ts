/**
 * A knowledge base's language → the PostgreSQL text search configuration its chunks are indexed
 * and searched with. Only configurations the server has are used (PostgreSQL 15 added Hindi,
 * Tamil and others to Snowball; an older server lacks them): anything else is `simple`, which
 * lower-cases and does not stem, and trigram similarity does the fuzzy part.
 */
import { QueryTypes, type Sequelize } from 'sequelize';

const SNOWBALL: Record<string, string> = {
  ar: 'arabic', ca: 'catalan', da: 'danish', de: 'german', el: 'greek', en: 'english', es: 'spanish', eu: 'basque',
  fi: 'finnish', fr: 'french', ga: 'irish', hi: 'hindi', hu: 'hungarian', hy: 'armenian', id: 'indonesian',
  it: 'italian', lt: 'lithuanian', nb: 'norwegian', ne: 'nepali', nl: 'dutch', nn: 'norwegian', no: 'norwegian',
  pt: 'portuguese', ro: 'romanian', ru: 'russian', sr: 'serbian', sv: 'swedish', ta: 'tamil', tr: 'turkish', yi: 'yiddish',
};

/** The configuration a BCP 47 tag asks for, before asking the server (`en-IN` → `english`). */
export function wantedConfig(language: string): string {
  return SNOWBALL[language.toLowerCase().split(/[-_]/)[0] ?? ''] ?? 'simple';
}

/** The configuration this server will use for `language`. */
export async function resolveTextSearchConfig(sequelize: Sequelize, language: string): Promise<string> {
  const wanted = wantedConfig(language);
  if (wanted === 'simple') return wanted;
  const rows = await sequelize.query<{ cfgname: string }>('SELECT cfgname FROM pg_ts_config WHERE cfgname = :wanted', {
    replacements: { wanted },
    type: QueryTypes.SELECT,
  });
  return rows.length > 0 ? wanted : 'simple';
}
