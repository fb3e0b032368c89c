import type { Person } from '../../model.ts';
import * as words from './data.ts';
import { type Rng } from './random.ts';

/** Text of synthetic companies: slugs, phone numbers, brand and person names. */

const ASCII_FOLD: Readonly<Record<string, string>> = { ą: 'a', ć: 'c', ę: 'e', ł: 'l', ń: 'n', ó: 'o', ś: 's', ź: 'z', ż: 'z' };

const slugCache = new Map<string, string>();

/** `slug` of a name from the word lists; they are few, so each is folded once. */
export function nameSlug(s: string): string {
  let cached = slugCache.get(s);
  if (cached === undefined) slugCache.set(s, (cached = slug(s)));
  return cached;
}

/** `Kowalski Budownictwo` → `kowalski-budownictwo`. */
export function slug(s: string): string {
  return s
    .toLowerCase()
    .replace(/[ąćęłńóśźż]/g, (c) => ASCII_FOLD[c]!)
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40)
    .replace(/-+$/, '');
}

export function mobilePhone(rng: Rng): string {
  const n = String(rng.int(1_000_000)).padStart(6, '0');
  return `+48 ${rng.pick(words.MOBILE_PREFIXES)} ${n.slice(0, 3)} ${n.slice(3)}`;
}

export function landlinePhone(rng: Rng, voivodeship: string): string {
  const area = rng.pick(words.AREA_CODES[voivodeship] ?? ['22']);
  const n = String(2_000_000 + rng.int(8_000_000));
  return `+48 ${area} ${n.slice(0, 3)} ${n.slice(3, 5)} ${n.slice(5)}`;
}

export function brandName(rng: Rng): string {
  return rng.pick(words.BRAND_HEADS) + rng.pick(words.BRAND_TAILS);
}

interface PersonName {
  first: string;
  surname: string;
}

function personName(rng: Rng): PersonName {
  const female = rng.chance(0.45);
  const [male, fem] = rng.pick(words.SURNAMES);
  return { first: female ? rng.pick(words.FEMALE_FIRST_NAMES) : rng.pick(words.MALE_FIRST_NAMES), surname: female ? fem : male };
}

function fullName(p: PersonName): string {
  return `${p.first} ${p.surname}`;
}

/** A person not yet in the list (full names are how persons are told apart). */
export function addPerson(rng: Rng, persons: Person[], role: string): Person {
  for (let attempt = 0; ; attempt++) {
    const name = fullName(personName(rng));
    const candidate = attempt < 20 ? name : `${name}-${words.SURNAMES[attempt % words.SURNAMES.length]![0]}`;
    if (!persons.some((p) => p.full_name === candidate)) {
      const person = { full_name: candidate, role };
      persons.push(person);
      return person;
    }
  }
}

export function splitName(fullNameText: string): PersonName {
  const space = fullNameText.indexOf(' ');
  return { first: fullNameText.slice(0, space), surname: fullNameText.slice(space + 1) };
}
