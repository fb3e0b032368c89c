/**
 * The legal forms of synthetic companies: their shares, starting conditions and transformations,
 * and the status texts.
 */

export type FormKind = 'jdg' | 'civil' | 'capital' | 'partnership' | 'foundation' | 'association' | 'coop';
export type Phase = 'active' | 'pending' | 'suspended' | 'liquidation' | 'bankruptcy' | 'restructuring' | 'closed';

export interface FormSpec {
  slug: string;
  kind: FormKind;
  /** Share of the registry, in percent. */
  weight: number;
  /** Starting conditions other than active, with their probabilities. */
  conditions: ReadonlyArray<readonly [Phase, number]>;
}

export const FORM_SPECS: readonly FormSpec[] = [
  { slug: 'jdg', kind: 'jdg', weight: 70, conditions: [['suspended', 0.07]] },
  {
    slug: 'sp-z-oo',
    kind: 'capital',
    weight: 17,
    conditions: [
      ['liquidation', 0.02],
      ['bankruptcy', 0.006],
      ['restructuring', 0.006],
      ['suspended', 0.015],
    ],
  },
  { slug: 'spolka-cywilna', kind: 'civil', weight: 5, conditions: [['suspended', 0.04]] },
  { slug: 'stowarzyszenie', kind: 'association', weight: 2.2, conditions: [['liquidation', 0.015]] },
  { slug: 'fundacja', kind: 'foundation', weight: 1.2, conditions: [['liquidation', 0.015]] },
  {
    slug: 'spolka-komandytowa',
    kind: 'partnership',
    weight: 1.2,
    conditions: [
      ['liquidation', 0.015],
      ['bankruptcy', 0.004],
      ['restructuring', 0.004],
      ['suspended', 0.01],
    ],
  },
  {
    slug: 'spolka-jawna',
    kind: 'partnership',
    weight: 0.9,
    conditions: [
      ['liquidation', 0.015],
      ['bankruptcy', 0.004],
      ['restructuring', 0.003],
      ['suspended', 0.01],
    ],
  },
  {
    slug: 'spoldzielnia',
    kind: 'coop',
    weight: 0.4,
    conditions: [
      ['liquidation', 0.03],
      ['bankruptcy', 0.01],
      ['restructuring', 0.006],
    ],
  },
  {
    slug: 'sa',
    kind: 'capital',
    weight: 0.3,
    conditions: [
      ['liquidation', 0.015],
      ['bankruptcy', 0.006],
      ['restructuring', 0.008],
    ],
  },
  {
    slug: 'psa',
    kind: 'capital',
    weight: 0.2,
    conditions: [
      ['liquidation', 0.02],
      ['bankruptcy', 0.004],
      ['suspended', 0.01],
    ],
  },
  { slug: 'spolka-partnerska', kind: 'partnership', weight: 0.15, conditions: [['liquidation', 0.01]] },
  {
    slug: 'spolka-komandytowo-akcyjna',
    kind: 'partnership',
    weight: 0.05,
    conditions: [
      ['liquidation', 0.02],
      ['bankruptcy', 0.005],
    ],
  },
];

/** Transformations that keep NIP and REGON (KSH art. 551, art. 26 §4). */
export const TRANSFORMS: Readonly<Record<string, readonly string[]>> = {
  jdg: ['sp-z-oo'],
  'spolka-cywilna': ['spolka-jawna'],
  'spolka-jawna': ['sp-z-oo', 'spolka-komandytowa'],
  'spolka-komandytowa': ['sp-z-oo'],
  'sp-z-oo': ['sa', 'psa'],
  psa: ['sp-z-oo'],
};

export const KRS_KINDS: ReadonlySet<FormKind> = new Set(['capital', 'partnership', 'foundation', 'association', 'coop']);
export const PROCEEDINGS_KINDS: ReadonlySet<FormKind> = new Set(['capital', 'partnership', 'coop']);
export const SUSPENDABLE_KINDS: ReadonlySet<FormKind> = new Set(['jdg', 'civil', 'capital', 'partnership']);

export const STATUS = {
  active: 'aktywny',
  pending: 'oczekuje na rozpoczęcie działalności',
  suspended: 'zawieszony',
  liquidation: 'w likwidacji',
  bankruptcy: 'w upadłości',
  deleted: 'wykreślony',
} as const;

export const PROCEEDINGS_SUFFIX: Partial<Record<Phase, string>> = {
  liquidation: 'W LIKWIDACJI',
  bankruptcy: 'W UPADŁOŚCI',
  restructuring: 'W RESTRUKTURYZACJI',
};

export const VAT = { active: 'Czynny', exempt: 'Zwolniony', none: 'Niezarejestrowany' } as const;
