import type { IdentifierType } from '../../registry/model.ts';
import type { WatchItemStatus } from './tables.ts';

/**
 * The confirmation of a watchlist add (docs/api-contract.md, "Mail"): which identifiers are now watched and which
 * could not be found (and which were removed before they were watched). One line per identifier, `TYPE value`, so a reader (or a program) finds each.
 */

export interface MailItem {
  identifier_value: string;
  status: WatchItemStatus;
  company_name: string | null;
}

export interface WatchlistMail {
  subject: string;
  text: string;
}

export function composeWatchlistMail(args: {
  requestRef: string;
  type: IdentifierType;
  items: readonly MailItem[];
  refunded: number;
}): WatchlistMail {
  const { type, items } = args;
  const watched = items.filter((i) => i.status === 'watched' || i.status === 'already_watched');
  const queuedElsewhere = items.filter((i) => i.status === 'already_queued');
  const notFound = items.filter((i) => i.status === 'not_found');
  const line = (i: MailItem) => {
    const note = i.status === 'already_watched' ? ' (already on your watchlist)' : '';
    return `  ${type} ${i.identifier_value}${i.company_name ? ` - ${i.company_name}` : ''}${note}`;
  };

  const lines = [
    'Hello,',
    '',
    `your watchlist request ${args.requestRef} is complete.`,
    '',
    `Now watched (${watched.length}):`,
    ...(watched.length > 0 ? watched.map(line) : ['  none']),
    '',
    `Could not be found (${notFound.length}):`,
    ...(notFound.length > 0 ? notFound.map(line) : ['  none']),
  ];
  if (notFound.length > 0) {
    lines.push('', 'No registry knows these identifiers, so they are not watched.');
  }
  if (args.refunded > 0) {
    lines.push(`${args.refunded} credit${args.refunded === 1 ? ' has' : 's have'} been refunded to your wallet.`);
  }
  const removed = items.filter((i) => i.status === 'removed');
  if (removed.length > 0) {
    lines.push('', `Removed before they were watched (${removed.length}; not watched, refunded):`, ...removed.map(line));
  }
  if (queuedElsewhere.length > 0) {
    lines.push(
      '',
      `Already being added by an earlier request (${queuedElsewhere.length}; its own confirmation follows):`,
      ...queuedElsewhere.map(line),
    );
  }
  lines.push('', 'Daily changes of watched companies appear in GET /api/v1/watchlist/events.', '', '-- regwatch');

  const subject =
    notFound.length === 0
      ? `Watchlist updated: ${watched.length} ${watched.length === 1 ? 'company' : 'companies'} watched`
      : `Watchlist updated: ${watched.length} watched, ${notFound.length} not found`;
  return { subject, text: lines.join('\n') + '\n' };
}
