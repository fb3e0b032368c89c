/**
 * The business-form phrases of Polish company names, written out or abbreviated: `Przedsiębiorstwo
 * Produkcyjno-Handlowo-Usługowe`, `Przeds. Prod.-Handl.-Usł.` and `P.P.H.U.` are one thing to
 * whoever types a list. nameTokens (normalize.ts) reads such a phrase as the acronym people
 * write (`pphu`), on the registry's side and the query's alike, so the three meet.
 *
 * A phrase is an entity word followed by one to four activity words, each written out in any
 * gender (`handlowo`, `handlowe`, `handlowy`, `handlowa`) or abbreviated (`handl`, `usł`). Nouns
 * (`handel`, `usługi`, `produkcja`, `transport`) are not activity words: they are often the name
 * itself (`Firma Transport Kowalski`). Words arrive folded (lower case, no diacritics) and split
 * at punctuation.
 */

/** The entity words as written out, by their abbreviations. */
const ENTITY_WORDS: ReadonlyMap<string, string> = new Map([
  ['przeds', 'przedsiebiorstwo'],
  ['przedsieb', 'przedsiebiorstwo'],
  ['zakl', 'zaklad'],
]);

const ENTITIES: ReadonlyMap<string, string> = new Map([
  ...['przedsiebiorstwo', 'przeds', 'przedsieb'].map((w) => [w, 'p'] as const),
  ['firma', 'f'],
  ...['zaklad', 'zakl'].map((w) => [w, 'z'] as const),
]);

const ACTIVITIES: ReadonlyMap<string, string> = new Map(
  (
    [
      ['p', ['produkcyjno', 'produkcyjne', 'produkcyjny', 'produkcyjna', 'prod', 'produkc']],
      ['h', ['handlowo', 'handlowe', 'handlowy', 'handlowa', 'handl']],
      ['u', ['uslugowo', 'uslugowe', 'uslugowy', 'uslugowa', 'usl', 'uslug']],
      ['w', ['wielobranzowe', 'wielobranzowy', 'wielobranzowa', 'wielobr']],
    ] as const
  ).flatMap(([letter, words]) => words.map((w) => [w, letter] as const)),
);

const MAX_ACTIVITIES = 4;

/**
 * The words with each business-form phrase replaced by its acronym: `przedsiebiorstwo handlowo
 * uslugowe kowalski` → `phu kowalski`. An entity word with no activity word after it stays a
 * word, written out (`przeds budowlane` → `przedsiebiorstwo budowlane`, `firma kowalski`).
 */
export function abbreviateBusinessForms(words: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < words.length; i++) {
    const entity = ENTITIES.get(words[i]!);
    if (entity !== undefined) {
      let acronym = entity;
      let j = i + 1;
      for (; j < words.length && j - i <= MAX_ACTIVITIES; j++) {
        const letter = ACTIVITIES.get(words[j]!);
        if (letter === undefined) break;
        acronym += letter;
      }
      if (j > i + 1) {
        out.push(acronym);
        i = j - 1;
        continue;
      }
    }
    out.push(ENTITY_WORDS.get(words[i]!) ?? words[i]!);
  }
  return out;
}
