import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { claimedExtension, cleanOriginalName } from '../../src/ingest/display-name.js'
import { randomToken, renderKey, toStorageKey } from '../../src/ingest/keys.js'

describe('storage keys', () => {
  test('a path format renders date parts, time and CSPRNG characters', () => {
    const now = new Date(2026, 10, 3, 4, 5, 6)
    const key = renderKey('image/{yyyy}{mm}{dd}/{hh}{ii}{ss}-{time}{rand:24}', '.png', now)
    assert.match(key, new RegExp(`^image/20261103/040506-${now.getTime()}[0-9a-z]{24}\\.png$`))
  })

  test('random tokens are uniform-looking and never repeat', () => {
    const tokens = new Set(Array.from({ length: 2000 }, () => randomToken(24)))
    assert.equal(tokens.size, 2000)
    assert.ok([...tokens].every((t) => /^[0-9a-z]{24}$/.test(t)))
  })

  test('traversal, absolute, backslash and odd keys are never storage keys', () => {
    for (const bad of [
      '../x',
      'a/../b',
      '/etc/passwd',
      'a\\b',
      'a//b',
      '.hidden',
      'a/.x',
      'x\u0000.png',
      'a/b;c',
      '',
      'a'.repeat(600),
    ])
      assert.equal(toStorageKey(bad), null, JSON.stringify(bad))
    assert.equal(toStorageKey('image/20261123/abc.png'), 'image/20261123/abc.png')
  })

  test('an extension that is not a plain dotted token cannot be rendered', () => {
    assert.throws(() => renderKey('x/{rand:24}', '.p/hp'), /UE_KEY_INVALID/)
  })
})

describe('client file names', () => {
  test('the display name keeps Chinese text and drops paths, controls and markup', () => {
    assert.equal(cleanOriginalName('C:\\fakepath\\报告.pdf'), '报告.pdf')
    assert.equal(cleanOriginalName('../../x.png'), 'x.png')
    assert.equal(cleanOriginalName('a\r\nb\u202e.png'), 'ab.png')
    assert.equal(cleanOriginalName('"<b>".png'), 'b.png')
    assert.equal(cleanOriginalName(''), 'file')
    assert.ok(Buffer.byteLength(cleanOriginalName('字'.repeat(400))) <= 255)
  })

  test('decomposed Unicode is normalised to NFC', () => {
    assert.equal(cleanOriginalName('cafe\u0301.png'), 'caf\u00e9.png')
  })

  test('the claimed extension is lower-cased and refused for tricks', () => {
    assert.equal(claimedExtension('A.JPG'), '.jpg')
    assert.equal(claimedExtension('a.php.jpg'), '.jpg')
    for (const bad of [
      'a.php\u0000.jpg',
      'a.jpg.',
      'a.jpg ',
      '.htaccess',
      'noext',
      'a.',
      'a/b.png',
      'a.p-p',
    ])
      assert.equal(claimedExtension(bad), '', JSON.stringify(bad))
  })
})
