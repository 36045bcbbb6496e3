import assert from 'node:assert/strict'
import { completeBodyOf, completeResponse } from '../../src/shared/complete-body.js'
import { jsonResponse } from '../../src/shared/respond.js'
import { describe, test } from '../helpers/test.js'

describe('complete answers', () => {
  test('a complete answer is a Response any host can read: status, headers and body', async () => {
    const response = jsonResponse({ state: 'SUCCESS' }, 201)
    assert.ok(response instanceof Response)
    assert.equal(response.status, 201)
    assert.equal(response.ok, true)
    assert.equal(response.headers.get('content-type'), 'application/json; charset=utf-8')
    assert.equal(response.bodyUsed, false)
    assert.deepEqual(await response.json(), { state: 'SUCCESS' })
    assert.equal(response.bodyUsed, true)
  })

  test('headers changed in place before and after the body is read stay on the answer', async () => {
    const response = completeResponse('hello', { status: 404, headers: { 'X-A': '1' } })
    response.headers.set('X-B', '2')
    const copy = response.clone()
    response.headers.set('X-C', '3')
    assert.equal(copy.headers.get('x-b'), '2')
    assert.equal(await copy.text(), 'hello')
    assert.equal(response.headers.get('x-a'), '1')
    assert.equal(response.headers.get('x-c'), '3')
    assert.equal(response.ok, false)
    assert.equal(response.status, 404)
  })

  test('the Node edge gets the string until something starts reading the stream', async () => {
    const response = completeResponse('{"a":1}', {})
    assert.equal(completeBodyOf(response), '{"a":1}')
    const reader = response.body?.getReader()
    assert.equal(completeBodyOf(response), '{"a":1}')
    await reader?.read()
    assert.equal(completeBodyOf(response), undefined)
    assert.equal(completeBodyOf(new Response('x')), undefined)
  })

  test('a complete answer can be the body and init of a new Response', async () => {
    const response = completeResponse('copied', { status: 202, headers: { 'X-A': '1' } })
    const copy = new Response(response.body, response)
    assert.equal(copy.status, 202)
    assert.equal(copy.headers.get('x-a'), '1')
    assert.equal(await copy.text(), 'copied')
  })
})
