/** What the MCP server says of itself at `initialize`, shared by the HTTP endpoint and the stdio bridge. */

export const SERVER_INFO = { name: 'regwatch', version: '1.0.0' };

export const INSTRUCTIONS =
  'regwatch: the Polish business registries (KRS, REGON/BIR, CEIDG, VAT white list) and daily change monitoring. ' +
  'Find companies with search_companies or match_companies, read one with get_company, follow changes with watch_companies and watchlist_events. ' +
  'Most tools cost credits (each description gives the price); pass dry_run: true to learn what a call would cost, and get_wallet for the balance.';
