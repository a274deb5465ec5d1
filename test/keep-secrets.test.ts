import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { loadSettings } from '../lib/settings.js';
import { keepSecrets } from '../scripts/keep-secrets.js';

// Compose's control tokens (telephony spec section 3: generated and kept when unset): its `secrets`
// service keeps them in a volume, and the services read them through `<NAME>_FILE`.

const dir = mkdtempSync(path.join(tmpdir(), 'keep-secrets-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('tokens not given are generated once, kept for the owner and its group only, and read through <NAME>_FILE', () => {
  const kept = keepSecrets(dir, {});
  assert.deepEqual(
    kept.map((secret) => secret.name),
    ['MEDIA_CONTROL_TOKEN', 'SIP_CONTROL_TOKEN'],
  );
  const [media, sip] = kept.map((secret) => readFileSync(secret.file!, 'utf8').trim());
  assert.ok(media && sip && media.length >= 32, 'generated');
  assert.notEqual(media, sip, 'one secret per door');
  for (const secret of kept) assert.equal(statSync(secret.file!).mode & 0o777, 0o440);
  // Kept: the next `up` finds the same ones.
  const again = keepSecrets(dir, {});
  assert.deepEqual(
    again.map((secret) => readFileSync(secret.file!, 'utf8').trim()),
    [media, sip],
  );

  const settings = loadSettings({
    MEDIA_CONTROL_TOKEN_FILE: kept[0]!.file!,
    SIP_CONTROL_TOKEN_FILE: kept[1]!.file!,
  });
  assert.equal(settings.media.controlToken, media);
  assert.equal(settings.media.sip.controlToken, sip);
  // A token given outright wins over its file.
  const given = loadSettings({ MEDIA_CONTROL_TOKEN: 'given', MEDIA_CONTROL_TOKEN_FILE: kept[0]!.file! });
  assert.equal(given.media.controlToken, 'given');
});

test('a token given in the environment is left to it: no file is written', () => {
  const own = mkdtempSync(path.join(dir, 'given-'));
  const kept = keepSecrets(own, { MEDIA_CONTROL_TOKEN: 'mine', SIP_CONTROL_TOKEN: 'also mine' });
  assert.deepEqual(kept, [
    { name: 'MEDIA_CONTROL_TOKEN', file: null },
    { name: 'SIP_CONTROL_TOKEN', file: null },
  ]);
});

test('a <NAME>_FILE that cannot be read or is empty stops the settings, naming it', () => {
  assert.throws(
    () => loadSettings({ MEDIA_CONTROL_TOKEN_FILE: path.join(dir, 'missing') }),
    /MEDIA_CONTROL_TOKEN_FILE: cannot read .*missing \(ENOENT\)/,
  );
  const empty = path.join(dir, 'empty');
  writeFileSync(empty, ' \n');
  assert.throws(
    () => loadSettings({ SIP_CONTROL_TOKEN_FILE: empty }),
    /SIP_CONTROL_TOKEN_FILE: .*empty is empty/,
  );
});
