/**
 * A name written with or without the space or hyphen inside a compound: `Automax` for
 * `AUTO-MAX`, `Bud Mar` for `BUDMAR`. nameTokens makes punctuation a space (normalize.ts), so the
 * two spellings give different words; DECISIONS 10 says names match ignoring punctuation. The
 * query's name is therefore also read in its compound forms, each judged by the registry's
 * vocabulary: two neighbouring words joined when the registry knows the joined word, one word
 * split in two when it knows both halves (docs/match.md, "How names are compared").
 */

/** A split's halves are at least this long: `auto|max`, never `a|utomax`. */
const MIN_PART = 3;
/** Compound forms read besides the name as written. */
export const MAX_COMPOUND_FORMS = 4;

/**
 * The query's words as written, then each form with one pair joined or one word split, as far as
 * `known` (a word some live company holds) allows; at most MAX_COMPOUND_FORMS besides the first.
 */
export function compoundForms(tokens: readonly string[], known: (word: string) => boolean): string[][] {
  const forms: string[][] = [[...tokens]];
  const seen = new Set([tokens.join(' ')]);
  const add = (form: string[]) => {
    const key = form.join(' ');
    if (forms.length > MAX_COMPOUND_FORMS || seen.has(key)) return;
    seen.add(key);
    forms.push(form);
  };
  for (let i = 0; i + 1 < tokens.length; i++) {
    const joined = tokens[i]! + tokens[i + 1]!;
    if (known(joined)) add([...tokens.slice(0, i), joined, ...tokens.slice(i + 2)]);
  }
  for (let i = 0; i < tokens.length; i++) {
    const word = tokens[i]!;
    // A word the registry knows as written is split only when it knows both halves too.
    for (let k = MIN_PART; k + MIN_PART <= word.length; k++) {
      const left = word.slice(0, k);
      const right = word.slice(k);
      if (known(left) && known(right)) add([...tokens.slice(0, i), left, right, ...tokens.slice(i + 1)]);
    }
  }
  return forms;
}
