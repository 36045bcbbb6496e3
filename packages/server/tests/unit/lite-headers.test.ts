import assert from 'node:assert/strict'
import { liteEntriesOf, liteHeaders, rawHeaders } from '../../src/shared/lite-headers.js'
import { describe, test } from '../helpers/test.js'

type Op = ['set' | 'append', string, string] | ['delete', string]

/** Runs the same operations on lite and real `Headers` and returns both. */
function both(init: Record<string, string>, ops: Op[]): [Headers, Headers] {
  const lite = liteHeaders(init)
  const real = new Headers(init)
  for (const op of ops)
    for (const h of [lite, real])
      if (op[0] === 'delete') h.delete(op[1])
      else h[op[0]](op[1], op[2])
  return [lite, real]
}

describe('lite headers', () => {
  test('they are Headers and answer get and has as Headers do, whatever the case of the name', () => {
    const [lite, real] = both({ 'Content-Type': 'text/plain', 'X-A': ' padded\t' }, [
      ['append', 'x-a', 'two'],
      ['set', 'X-B', 'b'],
      ['append', 'Vary', 'Origin'],
      ['delete', 'X-B'],
    ])
    assert.ok(lite instanceof Headers)
    for (const name of ['content-type', 'CONTENT-TYPE', 'x-a', 'x-b', 'vary', 'missing']) {
      assert.equal(lite.get(name), real.get(name), name)
      assert.equal(lite.has(name), real.has(name), name)
    }
    assert.equal(lite.get('x-a'), 'padded, two')
  })

  test('iterating them gives what iterating real Headers gives, and changes after that still count', () => {
    const [lite, real] = both({ 'X-Z': '1', 'X-A': '2' }, [['append', 'x-z', '3']])
    assert.deepEqual([...lite], [...real])
    lite.set('X-C', 'after')
    real.set('X-C', 'after')
    assert.deepEqual([...lite.entries()], [...real.entries()])
    assert.equal(lite.get('x-c'), 'after')
  })

  test('a name or value Headers refuses is refused with the same TypeError', () => {
    const lite = liteHeaders()
    assert.throws(() => lite.set('bad name', 'x'), TypeError)
    assert.throws(() => lite.append('x-a', 'line\r\nInjected: 1'), TypeError)
    assert.throws(() => lite.get('a:b'), TypeError)
    assert.throws(() => liteHeaders({ 'x-a': 'nul\0' }), TypeError)
    assert.throws(() => lite.set('x-a', '\u{1F600}'), TypeError)
    assert.deepEqual([...lite], [])
  })

  test('Set-Cookie keeps each cookie apart, as Headers does', () => {
    const lite = liteHeaders({ 'Content-Type': 'text/plain' })
    lite.append('Set-Cookie', 'a=1')
    lite.append('Set-Cookie', 'b=2')
    assert.deepEqual(lite.getSetCookie(), ['a=1', 'b=2'])
    assert.equal(lite.get('content-type'), 'text/plain')
    assert.equal(liteEntriesOf(lite), undefined)
  })

  test('a request’s raw header list is read as Headers, with repeated names combined and refused pairs dropped', () => {
    const headers = rawHeaders([
      'Host',
      'example.test',
      'Accept',
      'a',
      'accept',
      'b',
      ':authority',
      'pseudo',
      'X-Bad',
      'nul\0byte',
      'Authorization',
      'Bearer t',
    ])
    assert.equal(headers.get('accept'), 'a, b')
    assert.equal(headers.get('authorization'), 'Bearer t')
    assert.equal(headers.has('x-bad'), false)
    assert.deepEqual(
      [...headers].map(([name]) => name),
      ['accept', 'authorization', 'host'],
    )
  })

  test('they can build a Request or a Response like any Headers', async () => {
    const headers = liteHeaders({ 'Content-Type': 'application/json' })
    headers.append('X-Request-Id', 'r1')
    const response = new Response('{}', { headers })
    assert.equal(response.headers.get('x-request-id'), 'r1')
    const request = new Request('http://localhost/', { headers: rawHeaders(['X-A', '1']) })
    assert.equal(request.headers.get('x-a'), '1')
    assert.deepEqual(await response.json(), {})
  })

  test('the Node edge reads the list as it stands until something builds the real Headers', () => {
    const headers = liteHeaders({ 'Content-Type': 'text/plain' })
    headers.append('Vary', 'Origin')
    assert.deepEqual(liteEntriesOf(headers), [
      ['content-type', 'text/plain'],
      ['vary', 'Origin'],
    ])
    assert.equal(liteEntriesOf(new Headers()), undefined)
    ;[...headers]
    assert.equal(liteEntriesOf(headers), undefined)
  })
})
