import assert from 'node:assert/strict'
import { cutToBytes, promptTokenBound, utf8Bytes } from '../../src/ai/tokens.js'
import { describe, test } from '../helpers/test.js'

const SAMPLES = [
  '',
  'The river runs to the sea.',
  '你好，世界。翻译：',
  'naïve café Ωμέγα',
  'emoji 😀👍🏽 and a flag 🇨🇳',
  'lone surrogates \ud800 and \udc00 at the end \ud83d',
]

describe('AI token estimates', () => {
  test('a prompt counts as its UTF-8 bytes, plus 8 per message and 32 per call', () => {
    for (const text of SAMPLES) assert.equal(utf8Bytes(text), Buffer.byteLength(text), text)
    const messages = [
      { role: 'system' as const, content: 'Translate.' },
      { role: 'user' as const, content: '你好' },
    ]
    assert.equal(promptTokenBound(messages), 10 + 6 + 2 * 8 + 32)
  })

  test('an answer is cut between characters, never inside one', () => {
    const text = 'ab你好😀c'
    const cuts = Array.from({ length: 16 }, (_, n) => cutToBytes(text, n))
    assert.deepEqual(cuts.slice(0, 6), ['', 'a', 'ab', 'ab', 'ab', 'ab你'])
    for (const [n, cut] of cuts.entries()) {
      assert.ok(Buffer.byteLength(cut) <= n)
      assert.ok(text.startsWith(cut))
      assert.ok(!/[\ud800-\udbff]$/.test(cut), 'no half of a surrogate pair')
    }
    assert.equal(cutToBytes(text, 100), text)
  })
})
