import assert from 'node:assert/strict'
import { loadConfig } from '../../src/config/load.js'
import { isUeError } from '../../src/shared/errors.js'
import { describe, test } from '../helpers/test.js'

const URL_WITH_SECRET = 'postgresql://ueditor:s3cr3t-pa55@db.internal:5432/ueditor'

function failure(fn: () => unknown): string {
  try {
    fn()
  } catch (e) {
    assert.ok(isUeError(e) && e.code === 'UE_CONFIG_INVALID')
    return e.message
  }
  assert.fail('expected UE_CONFIG_INVALID')
}

describe('metadata index configuration', () => {
  test('UEDITOR_DATABASE_URL alone selects the postgres driver with a pool of 10', () => {
    const cfg = loadConfig({ env: { UEDITOR_DATABASE_URL: URL_WITH_SECRET }, cwd: '/srv/app' })
    assert.deepEqual(cfg.index, {
      driver: 'postgres',
      url: URL_WITH_SECRET,
      poolSize: 10,
      connectTimeoutMs: 5000,
      queryTimeoutMs: 30000,
      preparedStatements: true,
    })
  })

  test('UEDITOR_DATABASE_POOL_SIZE sets the pool and the config file can choose postgres too', () => {
    const fromEnv = loadConfig({
      env: { UEDITOR_DATABASE_URL: 'postgres://db/ueditor', UEDITOR_DATABASE_POOL_SIZE: '25' },
    })
    assert.deepEqual(fromEnv.index, {
      driver: 'postgres',
      url: 'postgres://db/ueditor',
      poolSize: 25,
      connectTimeoutMs: 5000,
      queryTimeoutMs: 30000,
      preparedStatements: true,
    })
    const fromCode = loadConfig({
      env: {},
      overrides: {
        index: { driver: 'postgres', url: 'postgres://db/x', poolSize: 3, queryTimeoutMs: 2000 },
      },
    })
    assert.deepEqual(fromCode.index, {
      driver: 'postgres',
      url: 'postgres://db/x',
      poolSize: 3,
      connectTimeoutMs: 5000,
      queryTimeoutMs: 2000,
      preparedStatements: true,
    })
  })

  test('UEDITOR_DATABASE_PREPARED_STATEMENTS=false turns named statements off, for PgBouncer before 1.21', () => {
    const off = loadConfig({
      env: {
        UEDITOR_DATABASE_URL: 'postgres://db/x',
        UEDITOR_DATABASE_PREPARED_STATEMENTS: 'false',
      },
    })
    assert.equal(off.index.driver === 'postgres' && off.index.preparedStatements, false)
    assert.match(
      failure(() =>
        loadConfig({
          env: {
            UEDITOR_DATABASE_URL: 'postgres://db/x',
            UEDITOR_DATABASE_PREPARED_STATEMENTS: 'maybe',
          },
        }),
      ),
      /index\.preparedStatements \(from UEDITOR_DATABASE_PREPARED_STATEMENTS=maybe\)/,
    )
  })

  test('without a URL the index stays a SQLite file under the data folder', () => {
    const cfg = loadConfig({ env: { UEDITOR_SQLITE_FILE: 'meta.db' }, cwd: '/srv/app' })
    assert.deepEqual(cfg.index, { driver: 'sqlite', file: '/srv/app/data/meta.db' })
  })

  test('a URL of another scheme is refused, naming the variable but not echoing the URL', () => {
    const secret = 'mysql://ueditor:s3cr3t-pa55@db.internal/ueditor'
    const message = failure(() => loadConfig({ env: { UEDITOR_DATABASE_URL: secret } }))
    assert.match(
      message,
      /index\.url \(from UEDITOR_DATABASE_URL=<hidden>\): must be a postgres:\/\//,
    )
    assert.doesNotMatch(message, /s3cr3t-pa55|db\.internal/)
  })

  test('postgres without a URL, or with a SQLite file, is refused', () => {
    assert.match(
      failure(() => loadConfig({ env: { UEDITOR_INDEX_DRIVER: 'postgres' } })),
      /index\.url/,
    )
    const mixed = failure(() =>
      loadConfig({ env: { UEDITOR_DATABASE_URL: URL_WITH_SECRET, UEDITOR_SQLITE_FILE: 'a.db' } }),
    )
    assert.match(mixed, /index.*file/)
    assert.doesNotMatch(mixed, /s3cr3t-pa55/)
  })

  test('a pool size outside 1-1000 is refused', () => {
    assert.match(
      failure(() =>
        loadConfig({
          env: { UEDITOR_DATABASE_URL: 'postgres://db/x', UEDITOR_DATABASE_POOL_SIZE: '0' },
        }),
      ),
      /index\.poolSize \(from UEDITOR_DATABASE_POOL_SIZE=0\)/,
    )
  })
})
