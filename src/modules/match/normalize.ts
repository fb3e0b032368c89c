import { foldText, normalizePostalCode, stripLegalFormWords } from '../../lib/text.ts';
import { abbreviateBusinessForms } from './business-forms.ts';

/**
 * How the matcher reads what people type: a company name becomes a bag of words (tokens) with
 * case, diacritics, punctuation, quotes and legal-form words gone; a city, street and postal code
 * become keys compared for equality. The same functions read the registry's side, so both meet
 * in one form (docs/match.md).
 */

const NON_WORD = /[^a-z0-9]+/g;
const HAS_DIGIT = /\d/;
const WORD_WITH_DIGIT = /[a-z0-9]*\d[a-z0-9]*/g;
/** Invisible formatting a pasted name carries (soft hyphen, zero-width space and joiners, word joiner, BOM): nobody sees it, so it joins rather than splits. */
const INVISIBLE = /[\u00ad\u200b-\u200d\u2060\ufeff]/g;
/**
 * Compatibility forms that stand for plain letters: the Latin ligatures (`ﬁ`, U+FB00–FB06) and
 * full-width ASCII (`Ｆ`, U+FF01–FF5E). Only these are decomposed (NFKC): NFKC of the whole name
 * would also glue `™` to its word as `TM` (`ABC™` → `abctm`).
 */
const COMPATIBILITY_LETTERS = /[\ufb00-\ufb06\uff01-\uff5e]/g;

/** The HTML entities an export from a web system leaves in names: quotes, `&`, spaces, dashes. */
const NAMED_ENTITIES: Readonly<Record<string, string>> = {
  amp: '&',
  quot: '"',
  apos: "'",
  lt: '<',
  gt: '>',
  nbsp: ' ',
  bdquo: '„',
  ldquo: '“',
  rdquo: '”',
  laquo: '«',
  raquo: '»',
  ndash: '–',
  mdash: '—',
};
const ENTITY = /&(?:#(\d{1,7})|#x([0-9a-f]{1,6})|([a-z]{2,6}));/gi;

function decodeEntity(whole: string, dec?: string, hex?: string, name?: string): string {
  const code = dec !== undefined ? Number(dec) : hex !== undefined ? parseInt(hex, 16) : null;
  // A code point that is no text (NUL, a surrogate, beyond U+10FFFF) stays as written.
  if (code !== null) return code > 0 && code <= 0x10ffff && (code < 0xd800 || code > 0xdfff) ? String.fromCodePoint(code) : whole;
  return NAMED_ENTITIES[name!.toLowerCase()] ?? whole;
}

/**
 * What a reader sees in text pasted from a PDF or a web page: ligatures and full-width forms as
 * their letters, invisible formatting gone, HTML entities as their characters. foldText alone read
 * `ﬁlmar` as `lmar`, `ＦＩＬＭＡＲ` as nothing and `&quot;` as the word `quot`. Applied to both
 * sides, the query and the registry's names.
 */
function readable(raw: string): string {
  const text = raw.includes('&') ? raw.replace(ENTITY, decodeEntity) : raw;
  return text.replace(INVISIBLE, '').replace(COMPATIBILITY_LETTERS, (c) => c.normalize('NFKC'));
}

/**
 * A list's identifier cell beyond the number: its label as a company's letterhead or footer writes
 * it (`NIP: 774-000-14-54`, `KRS nr 0000028860`, `Nr KRS 0000028860`, `REGON 610188201`), quotes or the mark
 * spreadsheets put before a number kept as text (`'7740001454`), full-width digits. What is left
 * is read by parseIdentifier (spaces, dashes, a `PL` prefix).
 */
const IDENTIFIER_LABEL = /^(?:nr\.?\s*)?(?:nip|regon|krs)(?:\s*(?:nr|no)\b)?[\s.:#]*/i;
const QUOTES = /^['"`„“”‘’]+|['"`„“”‘’]+$/g;

export function identifierText(raw: string): string {
  return readable(raw).trim().replace(QUOTES, '').trim().replace(IDENTIFIER_LABEL, '');
}

/** Words that join names and carry nothing: `Borkowski i Walczak`, `A & B`. */
const STOP_WORDS: ReadonlySet<string> = new Set(['i', 'oraz', 'and', 'the', 'der', 'und']);

/**
 * Words of legal forms that survive stripLegalFormWords when a list garbles them: reordered
 * (`spółka z odpowiedzialnością ograniczoną`), misspelt (`spólka z ograniczoną odpowiedzialnoscią`)
 * or split (`sp. o.o. z`). Dropped from every name as they are; a misspelt one (allowedTypos) only
 * when it stands beside a legal-form word as written or `z`/`w` (`spkłka z ograniczoną`), so that
 * ordinary words a letter away from one (`Polka`, `Jasna Góra`, `Klub Partnerski`: spółka, jawna,
 * partnerska) stay in the name.
 */
const LEGAL_FORM_WORDS = [
  'spolka',
  'ograniczona',
  'odpowiedzialnoscia',
  'akcyjna',
  'jawna',
  'komandytowa',
  'komandytowo',
  'partnerska',
  'cywilna',
  'likwidacji',
  'upadlosci',
  'restrukturyzacji',
];
const EXACT_LEGAL_FORM_WORDS: ReadonlySet<string> = new Set(LEGAL_FORM_WORDS);
const LEGAL_FORM_ABBREVIATIONS: ReadonlySet<string> = new Set(['sp', 'oo', 'zoo', 'ooz', 'spzoo', 'spz']);
/** Words that join a legal form's words: `spółka z o.o.`, `w likwidacji`. */
const LEGAL_FORM_JOINERS: ReadonlySet<string> = new Set(['z', 'w']);
const MIN_TYPO_LEGAL_WORD = 5;

function isExactLegalFormWord(w: string | undefined): boolean {
  return w !== undefined && (EXACT_LEGAL_FORM_WORDS.has(w) || LEGAL_FORM_ABBREVIATIONS.has(w));
}

function isMisspeltLegalFormWord(w: string): boolean {
  if (w.length < MIN_TYPO_LEGAL_WORD) return false;
  const k = allowedTypos(w.length);
  return LEGAL_FORM_WORDS.some((f) => Math.abs(f.length - w.length) <= k && editDistanceWithin(w, f, k) <= k);
}

/** Whether words[i] is a legal form's word: as written, or misspelt beside one as written (or beside `z`/`w`). */
function isLegalFormWordAt(words: readonly string[], i: number): boolean {
  const w = words[i]!;
  if (isExactLegalFormWord(w)) return true;
  if (!isMisspeltLegalFormWord(w)) return false;
  const beside = (j: number) => {
    const n = words[j];
    return n !== undefined && (isExactLegalFormWord(n) || LEGAL_FORM_JOINERS.has(n));
  };
  return beside(i - 1) || beside(i + 1);
}

/**
 * The tokens of a company name: `PPHU „Auto-Max" Sp. z o.o.` → `pphu auto max`. Legal forms go
 * (src/lib/text.ts stripLegalFormWords); a business form written out or abbreviated becomes its
 * acronym (business-forms.ts: `Przedsiębiorstwo Handlowo-Usługowe` = `PHU`); a run of single
 * letters joins into one word, so `P.H.U.` = `P H U` = `PHU`; a single letter alone is dropped
 * (an initial, `i`, `&`).
 */
export function nameTokens(raw: string): string[] {
  const words = abbreviateBusinessForms(
    stripLegalFormWords(foldText(readable(raw)))
      .replace(NON_WORD, ' ')
      .split(' ')
      .filter((w) => w.length > 0),
  );
  const out: string[] = [];
  let letters = '';
  const flush = () => {
    if (letters.length > 1 && !isExactLegalFormWord(letters)) out.push(letters);
    letters = '';
  };
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if (w.length === 1 && w >= 'a' && w <= 'z') {
      letters += w;
      continue;
    }
    flush();
    if (!STOP_WORDS.has(w) && !isLegalFormWordAt(words, i)) out.push(w);
  }
  flush();
  return out;
}

/**
 * `Kędzierzyn-Koźle` and `KEDZIERZYN KOZLE` → `kedzierzyn kozle`; null when nothing is left.
 * Words with a digit go: no Polish place name has one, and a list's city column often carries
 * the postal code (`30-001 Kraków`, `Kraków, 30-001`).
 */
export function cityKey(raw: string | null | undefined): string | null {
  if (!raw) return null;
  const words = foldText(readable(raw)).replace(NON_WORD, ' ');
  const key = (HAS_DIGIT.test(words) ? words.replace(WORD_WITH_DIGIT, ' ') : words).replace(/\s+/g, ' ').trim();
  return key === '' ? null : key;
}

const STREET_TYPES: ReadonlySet<string> = new Set([
  'ul',
  'ulica',
  'al',
  'aleja',
  'aleje',
  'pl',
  'plac',
  'os',
  'osiedle',
  'rondo',
  'skwer',
  'bulwar',
]);

/**
 * `ul. Jana Pawła II 12/4` → `jana pawla ii`: the street's words without its type (`ul.`, `al.`,
 * `pl.`, `os.`) and without building or flat numbers (words with a digit).
 */
export function streetKey(raw: string | null | undefined): string | null {
  if (!raw) return null;
  const words = foldText(readable(raw)).replace(NON_WORD, ' ').trim().split(' ');
  const kept = words.filter((w, i) => w !== '' && !HAS_DIGIT.test(w) && !(i === 0 && STREET_TYPES.has(w)) && !(w.length === 1 && i === 0));
  return kept.length === 0 ? null : kept.join(' ');
}

/** `00-950` → 950 (a number, so the index holds it in an Int32Array); null unless five digits. */
export function postalKey(raw: string | null | undefined): number | null {
  if (!raw) return null;
  const digits = normalizePostalCode(readable(raw));
  return digits.length === 5 ? Number(digits) : null;
}

/** Inverse of postalKey, for messages and tests: 950 → `00-950`. */
export function formatPostalKey(key: number): string {
  const s = String(key).padStart(5, '0');
  return `${s.slice(0, 2)}-${s.slice(2)}`;
}

/** How many typos a word of this length may carry and still count: none up to 3 letters, 1 up to 7, then 2. */
export function allowedTypos(length: number): number {
  return length <= 3 ? 0 : length <= 7 ? 1 : 2;
}

const ROWS: Int32Array[] = [new Int32Array(64), new Int32Array(64), new Int32Array(64)];

/**
 * Optimal-string-alignment distance (Levenshtein plus adjacent transpositions) when it is at most
 * `max`; otherwise `max + 1`. Bounded: rows stop as soon as every cell is over `max`.
 */
export function editDistanceWithin(a: string, b: string, max: number): number {
  if (a === b) return 0;
  const la = a.length;
  const lb = b.length;
  if (Math.abs(la - lb) > max) return max + 1;
  if (max === 0) return 1;
  // Three rows reused between calls: the scorer asks this thousands of times a batch.
  if (lb + 1 > ROWS[0]!.length) for (let r = 0; r < 3; r++) ROWS[r] = new Int32Array(2 * (lb + 1));
  let [prev2, prev, cur] = ROWS as [Int32Array, Int32Array, Int32Array];
  for (let j = 0; j <= lb; j++) prev[j] = j;
  for (let i = 1; i <= la; i++) {
    cur[0] = i;
    let rowMin = i;
    const ca = a.charCodeAt(i - 1);
    for (let j = 1; j <= lb; j++) {
      const cb = b.charCodeAt(j - 1);
      let d = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (ca === cb ? 0 : 1));
      if (i > 1 && j > 1 && ca === b.charCodeAt(j - 2) && a.charCodeAt(i - 2) === cb) d = Math.min(d, prev2[j - 2]! + 1);
      cur[j] = d;
      if (d < rowMin) rowMin = d;
    }
    if (rowMin > max) return max + 1;
    [prev2, prev, cur] = [prev, cur, prev2];
  }
  return Math.min(prev[lb]!, max + 1);
}
