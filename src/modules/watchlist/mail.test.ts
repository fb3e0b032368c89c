import { test } from 'node:test';
import assert from 'node:assert/strict';
import { composeWatchlistMail } from './mail.ts';

test('the mail lists what is now watched and what could not be found, one identifier a line', () => {
  const mail = composeWatchlistMail({
    requestRef: 'ABC123DEF456',
    type: 'NIP',
    refunded: 1,
    items: [
      { identifier_value: '5261040828', status: 'watched', company_name: 'ALFA SA' },
      { identifier_value: '7740001454', status: 'already_watched', company_name: 'ORLEN SPÓŁKA AKCYJNA' },
      { identifier_value: '1234563218', status: 'not_found', company_name: null },
      { identifier_value: '9512345676', status: 'already_queued', company_name: null },
    ],
  });
  assert.equal(mail.subject, 'Watchlist updated: 2 watched, 1 not found');
  assert.match(mail.text, /request ABC123DEF456 is complete/);
  assert.match(
    mail.text,
    /Now watched \(2\):\n {2}NIP 5261040828 - ALFA SA\n {2}NIP 7740001454 - ORLEN SPÓŁKA AKCYJNA \(already on your watchlist\)\n/,
  );
  assert.match(mail.text, /Could not be found \(1\):\n {2}NIP 1234563218\n/);
  assert.match(mail.text, /1 credit has been refunded/);
  assert.match(mail.text, /earlier request \(1; its own confirmation follows\):\n {2}NIP 9512345676/);
});

test('nothing missing: no refund line, a plain subject', () => {
  const mail = composeWatchlistMail({
    requestRef: 'R',
    type: 'KRS',
    refunded: 0,
    items: [{ identifier_value: '0000028860', status: 'watched', company_name: null }],
  });
  assert.equal(mail.subject, 'Watchlist updated: 1 company watched');
  assert.match(mail.text, /Could not be found \(0\):\n {2}none/);
  assert.doesNotMatch(mail.text, /refunded/);
});
