import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { runDaily } from '../src/registry/daily.ts';
import { applyLedgerEntry } from '../src/modules/wallet/ledger.ts';
import { createMatchEngine } from '../src/modules/match/engine.ts';
import { bearer, createAccount, createTestApp, type TestApp } from './helpers/app.ts';
import { createTestDatabase } from './helpers/db.ts';
import { arraySource, companySnapshot, nipFor, type CompanySpec } from './helpers/registry.ts';

/**
 * Counterparty names as people type them in real spreadsheets, against a small
 * registry built as test/match-api.test.ts builds one (runDaily over an array source), with a few
 * hundred filler companies so that the words weigh as in a registry (common words are common).
 * Each case names its company unambiguously: it is the only company holding its distinctive word.
 */

const TARGETS: CompanySpec[] = [
  { n: 1, name: 'BUDREX SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ SPÓŁKA KOMANDYTOWA', city: 'Gdynia', postalCode: '81-001' },
  { n: 2, name: 'TRANSGAZ SPÓŁKA AKCYJNA', city: 'Płock', postalCode: '09-400' },
  { n: 3, name: 'ZBYCHPOL SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ', city: 'Toruń', postalCode: '87-100' },
  { n: 4, name: 'ELEKTROMAX SPÓŁKA CYWILNA', city: 'Bytom', postalCode: '41-900' },
  { n: 5, name: 'KOMBUD SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ W LIKWIDACJI', city: 'Radom', postalCode: '26-600' },
  { n: 6, name: 'PRZEDSIĘBIORSTWO PRODUKCYJNO-HANDLOWO-USŁUGOWE JANEX JAN KOWALSKI', city: 'Kielce', postalCode: '25-001' },
  { n: 7, name: 'FIRMA HANDLOWO-USŁUGOWA MAREX MAREK NOWAK', city: 'Opole', postalCode: '45-001' },
  { n: 8, name: 'PPHU KRYSTAL ANNA WIŚNIEWSKA', city: 'Lublin', postalCode: '20-001' },
  { n: 9, name: 'PRZEDSIĘBIORSTWO HANDLOWE ZBYCHMAR SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ', city: 'Toruń', postalCode: '87-100' },
  { n: 10, name: 'STALMET SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ SPÓŁKA KOMANDYTOWO-AKCYJNA', city: 'Katowice', postalCode: '40-001' },
  { n: 11, name: 'FILMAR SPÓŁKA AKCYJNA', city: 'Rzeszów', postalCode: '35-001' },
];

const PREFIXES = [
  'PRZEDSIĘBIORSTWO HANDLOWO-USŁUGOWE',
  'FIRMA HANDLOWA',
  'PPHU',
  'PHU',
  'FHU',
  'ZAKŁAD USŁUG',
  'PRZEDSIĘBIORSTWO PRODUKCYJNO-HANDLOWE',
  'USŁUGI BUDOWLANE',
  'SKLEP SPOŻYWCZY',
  'BIURO RACHUNKOWE',
];
const FORMS = ['SPÓŁKA Z OGRANICZONĄ ODPOWIEDZIALNOŚCIĄ', 'SPÓŁKA JAWNA', '', 'SPÓŁKA CYWILNA', 'SPÓŁKA AKCYJNA', 'SPÓŁKA KOMANDYTOWA'];
const WORDS = ['ALFA', 'BETA', 'GAMMA', 'DELTA', 'OMEGA', 'SIGMA', 'KAPPA', 'ZETA', 'NOVA', 'ORION'];
const FILLERS: CompanySpec[] = Array.from({ length: 300 }, (_, i) => ({
  n: 1000 + i,
  name: `${PREFIXES[i % 10]} ${WORDS[(i * 7) % 10]}${i} ${FORMS[i % 6]}`.trim(),
  city: 'Warszawa',
  postalCode: '00-001',
}));

type Candidate = { identifiers: { type: string; value: string }[]; name: string; score: number; match: boolean; features: string[] };

describe('messy real-world names (POST /companies/match)', () => {
  let t: TestApp;
  let auth: { authorization: string };

  before(async () => {
    const db = await createTestDatabase();
    await runDaily(db.db, {
      date: '2026-11-20',
      source: arraySource([...TARGETS, ...FILLERS].map(companySnapshot)),
      sourceKey: 'file:messy',
    });
    const engine = createMatchEngine({ db: db.db, logger: pino({ level: 'silent' }) });
    t = await createTestApp({ db, overrides: { matchEngine: engine }, env: { RATE_LIMIT_PER_MINUTE: '100000' } });
    await engine.refresh();
    const account = await createAccount(t);
    auth = bearer(account.master);
    const { id } = await t.db.db.selectFrom('accounts').select('id').where('user_ref', '=', account.userRef).executeTakeFirstOrThrow();
    await applyLedgerEntry(t.db.db, { accountId: String(id), type: 'deposit', amount: 10_000, description: 'test top-up' });
  });

  async function bet(query: object): Promise<{ nip: string | undefined; candidates: Candidate[] }> {
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/companies/match', headers: auth, payload: { queries: [query] } });
    assert.equal(res.statusCode, 200, res.body);
    const candidates = (res.json() as { data: { candidates: Candidate[] }[] }).data[0]!.candidates;
    const chosen = candidates.find((c) => c.match);
    return { nip: chosen?.identifiers.find((i) => i.type === 'NIP')?.value, candidates };
  }
  const summary = (cs: Candidate[]) => JSON.stringify(cs.map((c) => [c.name, c.score, c.match, c.features]));

  const expectBet = (n: number, query: object): void => {
    void test(`${JSON.stringify(query)} is bet on company ${n}`, async () => {
      const { nip, candidates } = await bet(query);
      assert.equal(nip, nipFor(n), `no bet on ${TARGETS.find((s) => s.n === n)!.name}; candidates: ${summary(candidates)}`);
    });
  };

  describe('legal forms written in full or in their usual short forms', () => {
    expectBet(1, { name: 'Budrex sp. z o.o. sp.k.' });
    expectBet(2, { name: 'Transgaz S.A.' });
    expectBet(3, { name: '„Zbychpol” Sp.z o.o' });
    expectBet(4, { name: 'Elektromax s.c.' });
    expectBet(5, { name: 'Kombud sp. z o.o. w likwidacji' });
    expectBet(8, { name: 'P.P.H.U. "Krystal" Anna Wisniewska' });
  });

  describe('DECISIONS 10: legal-form words, abbreviated as Polish lists abbreviate them, are not ignored', () => {
    // `sp. kom.` = spółka komandytowa, `Sp. Akc.` = spółka akcyjna, `sp. z ogr. odp.` = spółka z
    // ograniczoną odpowiedzialnością, `spółka cyw.` = spółka cywilna, `w likw.` = w likwidacji.
    expectBet(1, { name: 'Budrex sp. z o.o. sp. kom.' });
    expectBet(2, { name: 'Transgaz Sp. Akc.' });
    expectBet(3, { name: 'Zbychpol sp. z ogr. odp.' });
    expectBet(4, { name: 'Elektromax spółka cyw.' });
    expectBet(5, { name: 'Kombud sp. z o.o. w likw.' });
    expectBet(3, { name: 'Zbychpol sp. z o.o. w organizacji' });
    expectBet(4, { name: 'Elektromax s.j.' });
  });

  describe('legal forms abbreviated half-way, or the short forms of the longer ones', () => {
    // One word written out and the other cut (`sp. z ograniczoną odp.`), `odpow.`, and
    // spółka komandytowo-akcyjna cut as `sp. kom.-akc.`: no word of the legal form is left over
    // to count against the name (an unknown word weighs as the rarest).
    expectBet(3, { name: 'Zbychpol sp. z ograniczoną odp.' });
    expectBet(3, { name: 'Zbychpol sp. z ogr. odpowiedzialnością' });
    expectBet(3, { name: 'Zbychpol Sp. z ogr. odpow.' });
    expectBet(10, { name: 'Stalmet sp. z o.o. sp. kom.-akc.' });
    expectBet(10, { name: 'Stalmet Sp. z o.o. S.K.A.' });
    expectBet(5, { name: 'Kombud sp. z o.o. w likwid.' });
  });

  describe('text pasted from PDFs and web pages: ligatures, full-width letters, invisible formatting', () => {
    // `ﬁ` (U+FB01) was read as nothing, losing the letters `fi`; full-width letters as nothing at all.
    expectBet(11, { name: 'ﬁlmar S.A.' });
    expectBet(11, { name: 'ＦＩＬＭＡＲ Ｓ.Ａ.' });
    // Other symbols stay punctuation: `™` is not read as the letters `TM` glued to the word.
    expectBet(11, { name: 'Filmar™ S.A.' });
    expectBet(11, { name: 'Fil\u00admar S.A.' });
    expectBet(11, { name: 'Fil\u200bmar S.A.' });
    // HTML entities left in by an export from a web system: `amp`, `quot` read as words of the name.
    expectBet(2, { name: '&quot;Transgaz&quot; S.A.' });
    expectBet(3, { name: '&bdquo;Zbychpol&rdquo; Sp. z o.o.' });
    expectBet(5, { name: 'Kombud &amp; sp. z o.o. w likwidacji' });
    expectBet(4, { name: 'Elektromax&#32;s.c.' });
    void test('a full-width city and postal code agree with the company’s', async () => {
      const { nip, candidates } = await bet({ name: 'Filmar S.A.', city: 'Ｒｚｅｓｚóｗ', postal_code: '３５-００１' });
      assert.equal(nip, nipFor(11));
      assert.deepEqual(candidates[0]!.features, ['name', 'city', 'postal_code'], summary(candidates));
    });
  });

  describe('business forms: PPHU / PHU / FHU and their spelled-out forms, Przeds. (src/modules/match/business-forms.ts)', () => {
    expectBet(6, { name: 'PPHU Janex Jan Kowalski' });
    expectBet(6, { name: 'P.P.H.U. JANEX Jan Kowalski' });
    expectBet(7, { name: 'FHU Marex Marek Nowak' });
    expectBet(7, { name: 'F.H.U. „MAREX” Marek Nowak' });
    expectBet(8, { name: 'Przedsiębiorstwo Produkcyjno-Handlowo-Usługowe Krystal Anna Wiśniewska' });
    expectBet(9, { name: 'Przeds. Handlowe Zbychmar Sp. z o.o.' });
    expectBet(9, { name: 'PH Zbychmar sp. z o.o.' });
  });
});
