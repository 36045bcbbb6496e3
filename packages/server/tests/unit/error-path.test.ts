import assert from 'node:assert/strict'
import { answerError, catchErrors, type ErrorPath } from '../../src/shared/error-path.js'
import { UeError } from '../../src/shared/errors.js'
import { bindRequestContext } from '../../src/shared/request-context.js'
import { errorResponse } from '../../src/shared/respond.js'
import type { Logger } from '../../src/shared/types.js'
import { describe, test } from '../helpers/test.js'

interface Line {
  level: string
  o: Record<string, unknown>
  msg: string | undefined
}

function recorder(): { log: Logger; lines: Line[] } {
  const lines: Line[] = []
  const at = (level: string) => (o: object, msg?: string) =>
    lines.push({ level, o: o as Record<string, unknown>, msg })
  return {
    log: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') },
    lines,
  }
}

function request(): Request {
  const r = new Request('http://localhost/ueditor?action=image&token=secret')
  bindRequestContext(r, { requestId: 'req-1' })
  return r
}

describe('the one error path', () => {
  test('a thrown refusal is logged once at its level without a stack, counted once and answered', async () => {
    const { log, lines } = recorder()
    const counted: string[] = []
    const path: ErrorPath = { area: 'materials', log, count: (code) => counted.push(code) }
    const cases = [
      [new UeError('UE_NOT_FOUND', { detail: 'material 7' }), 'debug', 404],
      [new UeError('UE_SHUTTING_DOWN'), 'info', 503],
      [new UeError('UE_BUSY'), 'warn', 503],
    ] as const
    for (const [error, level, status] of cases) {
      const res = answerError(error, request(), path)
      assert.equal(res.status, status)
      assert.equal((await res.json()).error.code, error.code)
      const line = lines.at(-1) as Line
      assert.equal(line.level, level)
      assert.equal(line.msg, 'materials request refused')
      assert.equal(line.o.reqId, 'req-1')
      assert.equal(line.o.code, error.code)
      assert.ok(!('err' in line.o), 'a refusal carries no error object, so no stack')
    }
    assert.equal(lines.length, cases.length)
    assert.equal(lines[0]?.o.detail, 'material 7')
    assert.deepEqual(counted, ['UE_NOT_FOUND', 'UE_SHUTTING_DOWN', 'UE_BUSY'])
  })

  test('anything else becomes UE_INTERNAL, logged at error with the thrown error and the path, never the query', async () => {
    const { log, lines } = recorder()
    const counted: string[] = []
    const boom = new TypeError('boom')
    const res = answerError(boom, request(), { area: 'files', log, count: (c) => counted.push(c) })
    assert.equal(res.status, 500)
    assert.equal((await res.json()).error.code, 'UE_INTERNAL')
    assert.deepEqual(lines, [
      {
        level: 'error',
        o: { reqId: 'req-1', err: boom, path: '/ueditor' },
        msg: 'files request failed',
      },
    ])
    assert.deepEqual(counted, ['UE_INTERNAL'])
  })

  test('a failure of ours keeps its cause on the error line, with the caller’s details', () => {
    const { log, lines } = recorder()
    const cause = new Error('disk gone')
    const error = new UeError('UE_STORAGE_FAILED', { cause })
    answerError(error, request(), { area: 'editor', log, details: () => ({ action: 'image' }) })
    assert.deepEqual(lines, [
      {
        level: 'error',
        o: { reqId: 'req-1', err: error, cause, path: '/ueditor', action: 'image' },
        msg: 'editor request failed',
      },
    ])
  })

  test('the answer is in the caller’s shape when it gives one', async () => {
    const { log } = recorder()
    const path: ErrorPath = {
      area: 'editor',
      log,
      answer: (error) => errorResponse(error, { shape: 'editor', statusMode: 'protocol' }),
    }
    const res = answerError(new UeError('UE_FILE_TOO_LARGE'), request(), path)
    assert.equal(res.status, 200)
    assert.equal((await res.json()).code, 'UE_FILE_TOO_LARGE')
  })

  test('catchErrors answers what a handler throws and passes its answers through', async () => {
    const { log, lines } = recorder()
    const ok = new Response('fine')
    const handler = catchErrors(
      async (r) => {
        if (r.method === 'POST') throw new UeError('UE_METHOD_NOT_ALLOWED')
        return ok
      },
      { area: 'files', log },
    )
    assert.equal(await handler(request()), ok)
    const refused = await handler(new Request('http://localhost/x', { method: 'POST' }))
    assert.equal(refused.status, 405)
    assert.equal(lines.length, 1)
  })
})
