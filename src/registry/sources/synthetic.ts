/**
 * The `synthetic[:SEED]` source (synthetic/source.ts describes it), for code outside its folder.
 * Its parts have their own files under synthetic/: random.ts (hashes, PRNG, keyed permutations),
 * identifiers.ts, days.ts, forms.ts and tables.ts (legal forms and the dictionaries' tables),
 * state.ts (a company's change days), text.ts, base.ts (a company as of the epoch), changes.ts
 * (the change model), snapshot.ts (a company on a date) and data.ts (the word lists).
 */
export { createSyntheticSource, parseSyntheticSourceSpec, type SyntheticSource, type SyntheticSourceOptions } from './synthetic/source.ts';
export { NEW_INDEX_BASE, SYNTHETIC_DEFAULTS, SYNTHETIC_MAX_SIZE } from './synthetic/constants.ts';
