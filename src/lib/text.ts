/**
 * Text folding for matching registry data the way people type it: case, Polish diacritics,
 * whitespace, postal-code dashes, PKD dots and legal-form words do not matter.
 */

const COMBINING_MARKS = /[\u0300-\u036f]/g;
const WHITESPACE_RUN = /\s+/g;
// NFD decomposes ą ć ę ń ó ś ź ż but not these letters with a stroke, so they are mapped by hand.
const UNDECOMPOSABLE: Readonly<Record<string, string>> = { ł: 'l', đ: 'd', ø: 'o', ß: 'ss', ħ: 'h', ı: 'i' };
const UNDECOMPOSABLE_CHARS = /[łđøßħı]/g;
const PLAIN_ASCII = /^[\x20-\x7e]*$/;

/**
 * foldText by its definition: lower case, NFD, combining marks and the undecomposable letters
 * mapped away, whitespace collapsed and trimmed. foldText gives the same result faster; this is
 * its reference (a property test compares the two) and its path for text beyond FOLD_TABLE.
 */
export function foldTextByDefinition(s: string): string {
  const lower = s.toLowerCase();
  // Most registry strings that reach here again are already ASCII; skip the Unicode work for them.
  const stripped = PLAIN_ASCII.test(lower)
    ? lower
    : lower
        .normalize('NFD')
        .replace(COMBINING_MARKS, '')
        .replace(UNDECOMPOSABLE_CHARS, (c) => UNDECOMPOSABLE[c]!);
  return stripped.replace(WHITESPACE_RUN, ' ').trim();
}

/** Code points below this (ASCII, Latin-1, Latin Extended-A and B: every Polish letter) fold through FOLD_TABLE. */
const FOLD_TABLE_END = 0x250;

/**
 * Each code point's fold on its own, null for whitespace. Folding is per character in this range
 * (no combining marks, no context-dependent lower case), so a string of them folds character by
 * character; built from foldTextByDefinition's own steps.
 */
const FOLD_TABLE: readonly (string | null)[] = Array.from({ length: FOLD_TABLE_END }, (_, c) => {
  const ch = String.fromCharCode(c);
  return /\s/.test(ch)
    ? null
    : ch
        .toLowerCase()
        .normalize('NFD')
        .replace(COMBINING_MARKS, '')
        .replace(UNDECOMPOSABLE_CHARS, (x) => UNDECOMPOSABLE[x]!);
});

/**
 * Lower case, diacritics removed, whitespace collapsed and trimmed: `  Łódź  Wschód ` → `lodz wschod`.
 * A table lookup per character (a load folds every company's name: ~1 µs against ~3.5 through
 * normalize() and four regular expressions); any other character takes foldTextByDefinition.
 */
export function foldText(s: string): string {
  let out = '';
  let space = false;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= FOLD_TABLE_END) return foldTextByDefinition(s);
    const folded = FOLD_TABLE[c]!;
    if (folded === null) {
      space = true;
      continue;
    }
    if (space) {
      if (out !== '') out += ' ';
      space = false;
    }
    out += folded;
  }
  return out;
}

/** `00-950`, `00 950` and `00950` all become `00950`. */
export function normalizePostalCode(s: string): string {
  return s.replace(/\D+/g, '');
}

/** `62.01.Z`, `62.01.z`, `62 01 Z` and `6201Z` all become `6201Z`. */
export function normalizeActivityCode(s: string): string {
  return s.replace(/[\s.\-]+/g, '').toUpperCase();
}

// Written against folded text. `[\s.]*` between letter groups accepts `sp. z o.o.`, `sp.z o.o.`,
// `sp. z o. o.`, `sp z oo` and `spzoo` alike.
const SEP = '[\\s.]*';
const UNAMBIGUOUS_FORMS = [
  `(?:prosta${SEP})?spolka${SEP}(?:akcyjna|jawna|komandytowa|komandytowo[\\s-]*akcyjna|partnerska|cywilna|europejska)`,
  // Abbreviated as lists abbreviate them: `sp. kom.-akc.` (before `sp. kom.`, which would leave
  // `akc` behind), `sp. kom.`, `Sp. Akc.`, `spółka cyw.`, `sp. partn.`.
  `(?:spolka|sp)${SEP}(?:komandytowo|kom)[\\s.-]*(?:akcyjna|akc)\\.?`,
  `(?:spolka|sp)${SEP}(?:akc|kom|komandyt|cyw|partn)\\.?`,
  `sp${SEP}(?:akcyjna|jawna|komandytowa|partnerska|cywilna)`,
  // Either word written out or cut: `sp. z ogr. odp.`, `sp. z ograniczoną odp.`, `sp. z ogr. odpow.`.
  `(?:spolka|sp)${SEP}z${SEP}(?:(?:ograniczona|ogr)${SEP}(?:odpowiedzialnoscia|odpow|odp)|o${SEP}o)\\.?`,
  `w${SEP}(?:likwidacji|likwid|likw|upadlosci(?:${SEP}ukladowej|${SEP}likwidacyjnej)?|restrukturyzacji|organizacji)\\.?`,
];
// Short abbreviations that are also ordinary words or letters (`sa`, `psa`, `sc`): removed anywhere
// when written with a dot, but without dots only at the end of the name, so that "hotel dla psa
// burek" keeps its words while "burek psa" and "burek p.s.a." lose the legal form.
const AMBIGUOUS_FORMS = [`sp${SEP}k${SEP}a\\.?`, `s${SEP}k${SEP}a\\.?`, `p${SEP}s${SEP}a\\.?`, `sp${SEP}[jkp]\\.?`, `s${SEP}[acj]\\.?`];
const WORD_START = '(?<![a-z0-9.])';
const WORD_END = '(?![a-z0-9])';
const UNAMBIGUOUS_RE = new RegExp(`${WORD_START}(?:${UNAMBIGUOUS_FORMS.join('|')})${WORD_END}`, 'g');
const AMBIGUOUS_RE = new RegExp(`${WORD_START}(?:${AMBIGUOUS_FORMS.join('|')})${WORD_END}`, 'g');
const EDGE_PUNCTUATION = /^[\s,;:\-–]+|[\s,;:\-–.]+$/g;

/**
 * Removes legal-form words (`sp. z o.o.`, `spolka akcyjna`, `s.a.`, `w likwidacji`, and their
 * abbreviations: `sp. kom.`, `sp. kom.-akc.`, `sp. akc.`, `sp. z ogr. odp.`, `sp. z ograniczoną odp.`, `s.j.`, `w likw.`, …) from a folded name, so that a search for "orlen" or "orlen sa" finds "ORLEN SPÓŁKA AKCYJNA".
 */
export function stripLegalFormWords(foldedName: string): string {
  let s = foldedName.replace(UNAMBIGUOUS_RE, ' ');
  s = s.replace(AMBIGUOUS_RE, (match: string, offset: number, whole: string) =>
    match.includes('.') || isOnlyTrailingNoise(whole, offset + match.length) ? ' ' : match,
  );
  return s.replace(WHITESPACE_RUN, ' ').replace(EDGE_PUNCTUATION, '');
}

function isOnlyTrailingNoise(s: string, from: number): boolean {
  for (let i = from; i < s.length; i++) {
    const c = s[i]!;
    if (c !== ' ' && c !== ',' && c !== '.' && c !== '-') return false;
  }
  return true;
}
