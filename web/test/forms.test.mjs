// The account forms' per-field messages (web/src/lib/forms.js).
import test from 'node:test';
import assert from 'node:assert/strict';
import { fieldMessages } from '../src/lib/forms.js';

test('fieldMessages: one message per field the API names, in words', () => {
  // What POST /users.json answers a taken login with a short password.
  const err = { status: 422, body: { error: 'the account is invalid', code: 'EINVALID', login: ['is taken'], password_confirmation: ['does not match', 'is too short'] } };
  assert.deepEqual(fieldMessages(err), [
    { field: 'login', text: 'login is taken' },
    { field: 'password_confirmation', text: 'password confirmation does not match; is too short' },
  ]);
});

test('fieldMessages: nothing for an error without per-field lists', () => {
  assert.deepEqual(fieldMessages(new Error('network')), []);
  assert.deepEqual(fieldMessages(null), []);
  assert.deepEqual(fieldMessages({ body: { error: 'x', login: 'not a list' } }), []);
});
